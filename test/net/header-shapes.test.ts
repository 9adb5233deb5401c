// Headers in shapes other than the plain object the interface names, through the real CLI and a
// server on 127.0.0.1 (type check off, as for data from JSON.parse or a cast): read with
// Object.entries, a Map gave no headers at all, silently, a Map of secret headers sent no secret,
// and fetch's array of [name, value] pairs sent a header named "0". Each is a TypeError the
// script catches, saying how to pass it, with nothing sent.

import { describe, expect, it } from "vitest";
import { attemptOf, attempts, lit, perTestResources, permit, secretNetScript, tacit } from "./fixtures.js";

const resources = perTestResources("tacit-net-header-shapes-");

describe("headers in other shapes than a plain object", () => {
  it("are refused with what to pass instead, nothing sent; plain objects, null-prototype ones and Object.fromEntries are sent", async () => {
    const a = await resources.server();
    const { root, canary } = resources.projectWithSecret();
    const result = await tacit(
      root,
      secretNetScript([`127.0.0.1:${a.port}`], `
  const get = (path: string, options: any) => net.httpGet(${lit(a.origin)} + path, options);
  attempt("pairs", () => get("/pairs", { headers: [["x-shape", "pairs"]] }));
  attempt("map", () => get("/map", { headers: new Map([["x-shape", "map"]]) }));
  attempt("secret-map", () => get("/secret-map", { secretHeaders: new Map([["authorization", token]]) }));
  attempt("string", () => get("/string", { headers: "x-shape: string" }));
  attempt("plain", () => JSON.parse(get("/plain", { headers: { "x-shape": "plain" } })).headers["x-shape"]);
  attempt("null-prototype", () => {
    const headers = Object.create(null);
    headers["x-shape"] = "null-prototype";
    return JSON.parse(get("/null-prototype", { headers })).headers["x-shape"];
  });
  attempt("from-entries", () =>
    JSON.parse(get("/from-entries", { headers: Object.fromEntries(new Map([["x-shape", "from-entries"]])), secretHeaders: Object.fromEntries([["authorization", token]]) })).headers);
`),
      permit(`127.0.0.1:${a.port}`),
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    const refusal = (what: string, shape: string) => ({
      status: "TypeError",
      value:
        `options.${what} must be a plain object of header names to values (like { accept: "application/json" }), not ${shape}; nothing was sent. ` +
        "For a Map or a list of [name, value] pairs, pass Object.fromEntries(it)",
    });
    expect(attemptOf(found, "pairs")).toEqual(refusal("headers", "an array"));
    expect(attemptOf(found, "map")).toEqual(refusal("headers", "a Map"));
    expect(attemptOf(found, "secret-map")).toEqual(refusal("secretHeaders", "a Map"));
    expect(attemptOf(found, "string")).toEqual(refusal("headers", "a string"));
    expect(attemptOf(found, "plain")).toEqual({ status: "ok", value: "plain" });
    expect(attemptOf(found, "null-prototype")).toEqual({ status: "ok", value: "null-prototype" });
    expect(attemptOf(found, "from-entries")).toMatchObject({ status: "ok", value: { "x-shape": "from-entries", authorization: "[redacted]" } });
    // Only the three plain ones reached the server, the secret with the last alone; no header named "0" ever.
    expect(a.received.map((r) => r.url)).toEqual(["/plain", "/null-prototype", "/from-entries"]);
    expect(a.received.map((r) => r.headers.authorization)).toEqual([undefined, undefined, canary]);
    expect(a.received.every((r) => r.headers["0"] === undefined)).toBe(true);
    expect(result.stdout).not.toContain(canary);
  });
});
