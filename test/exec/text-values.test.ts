// What a command gets as arguments and input, and a request as its body, through the real CLI
// with real processes and a server on 127.0.0.1 (type check off, as for data from JSON.parse or a
// cast): text only. Anything else was sent as what String made of it, silently: bytes from
// readBytes() as "104,105" on a command's stdin or in a request's body, a missing argument as
// "undefined", an object as "[object Object]", a Classified value as "Classified(***)". Each is a
// TypeError the script catches, naming the argument; nothing runs and nothing is sent.

import { readdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { startServer } from "../net/fixtures.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, lit, realTempDir, tacit } from "./fixtures.js";

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const NOT_TEXT = /must be text \(a string\), not .*; nothing was done\. /;

describe("values that are not text", () => {
  it("as a command's argument or input, or a request's body, are a TypeError naming it; nothing runs or is sent", async () => {
    const { dir: root, cleanup } = realTempDir("tacit-exec-text-");
    cleanups.push(cleanup);
    const server = await startServer();
    cleanups.push(() => server.close());
    const result = await tacit(
      root,
      `${ATTEMPT_PRELUDE}
const bytes = new TextEncoder().encode("hi");
requestExecPermission(["touch", "tee"], (proc: any) => {
  attempt("input-bytes", () => proc.exec("tee", ["MARK_INPUT"], { input: bytes }));
  attempt("arg-undefined", () => proc.exec("touch", ["MARK_A", undefined]));
  attempt("arg-object", () => proc.exec("touch", ["MARK_B", { name: "x" }]));
  attempt("arg-classified", () => proc.exec("touch", [classify("MARK_SECRET")]));
  attempt("arg-number", () => proc.exec("touch", [7, true]));
});
requestNetwork([${lit(`127.0.0.1:${server.port}`)}], (net: any) => {
  attempt("post-bytes", () => net.httpPost(${lit(`${server.origin}/bytes`)}, bytes));
  attempt("request-object", () => net.httpRequest("PUT", ${lit(`${server.origin}/object`)}, { body: { a: 1 } }));
  attempt("post-text", () => JSON.parse(net.httpPost(${lit(`${server.origin}/text`)}, new TextDecoder().decode(bytes))).body);
});
`,
      ["--command-permissions", "touch,tee", "--network-permissions", `127.0.0.1:${server.port}`],
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    expect(attemptOf(found, "input-bytes")).toEqual({
      status: "TypeError",
      value:
        "exec(command, args, options): options.input must be text (a string), not bytes (a Uint8Array or ArrayBuffer); nothing was done. " +
        "Decode text with new TextDecoder().decode(bytes); calls take text only, so send binary data encoded (base64, hex) to a receiver that decodes it",
    });
    expect(attemptOf(found, "arg-undefined")).toEqual({
      status: "TypeError",
      value: "exec(command, args): args[1] must be text (a string), not undefined; nothing was done. Pass a string (String(value) or JSON.stringify(value) if that is what you mean)",
    });
    for (const [label, shape] of [["arg-object", "args\\[1\\] .* not an object"], ["arg-classified", "args\\[0\\] .* not an object"]] as const) {
      expect(attemptOf(found, label).status, label).toBe("TypeError");
      expect(String(attemptOf(found, label).value), label).toMatch(new RegExp(`^exec\\(command, args\\): ${shape}; nothing was done`));
    }
    expect(attemptOf(found, "arg-number")).toEqual({ status: "ok", value: { exitCode: 0, stdout: "", stderr: "" } });
    expect(String(attemptOf(found, "post-bytes").value)).toMatch(/^httpPost\(url, body\): body must be text \(a string\), not bytes/);
    expect(String(attemptOf(found, "request-object").value)).toMatch(/^httpRequest\(method, url, options\): options\.body must be text \(a string\), not an object/);
    for (const label of ["post-bytes", "request-object"]) expect(String(attemptOf(found, label).value), label).toMatch(NOT_TEXT);
    expect(attemptOf(found, "post-text")).toEqual({ status: "ok", value: "hi" });
    // Only the numbers made files ("7", "true"): no MARK_* nor "undefined", "[object Object]", "Classified(***)".
    expect(readdirSync(root).sort()).toEqual(["7", "true"]);
    expect(server.received.map((r) => r.url)).toEqual(["/text"]);
  });
});
