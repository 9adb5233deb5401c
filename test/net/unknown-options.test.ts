// Options a call does not take, through the real CLI with real processes and a server on
// 127.0.0.1 (type check off, as for options built in a variable or parsed from JSON): they were
// ignored, silently. httpGet(url, { method: "POST", body }) sent a GET with that body,
// exec(cmd, args, { env }) ran with tacit's environment, a misspelt "header" sent no headers.
// Each is a TypeError naming the option, what the call takes and what to do; nothing is sent or run.

import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, lit, perTestResources, permit, tacit } from "./fixtures.js";

const resources = perTestResources("tacit-net-unknown-options-");

describe("options a call does not take", () => {
  it("are a TypeError naming the option and what to do, with nothing sent or run; the options a call takes still work", async () => {
    const a = await resources.server();
    const root = resources.dir();
    const result = await tacit(
      root,
      `${ATTEMPT_PRELUDE}
requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net: any) => {
  attempt("get-method", () => net.httpGet(${lit(`${a.origin}/get-method`)}, { method: "POST", body: "delete-all" }));
  attempt("get-header-typo", () => net.httpGet(${lit(`${a.origin}/typo`)}, { header: { authorization: "x" } }));
  attempt("post-body", () => net.httpPost(${lit(`${a.origin}/post-body`)}, "one", { body: "two" }));
  attempt("request-timeout", () => net.httpRequest("GET", ${lit(`${a.origin}/timeout`)}, { timeout: 10 }));
  attempt("request-string", () => net.httpRequest("GET", ${lit(`${a.origin}/string`)}, "headers"));
  attempt("request-ok", () => JSON.parse(net.httpRequest("PUT", ${lit(`${a.origin}/ok`)}, { body: "b", headers: { "x-a": "1" }, contentType: "text/csv" }).body));
});
requestExecPermission(["sh"], (proc: any) => {
  attempt("exec-env", () => proc.exec("sh", ["-c", ": > MARK_ENV"], { env: { FOO: "1" } }));
  attempt("exec-timeout", () => proc.exec("sh", ["-c", ": > MARK_TIMEOUT"], { timeout: 5 }));
  attempt("exec-ok", () => proc.exec("sh", ["-c", "cat; pwd"], { input: "in ", cwd: ".", timeoutMs: 20000 }).stdout);
});
`,
      [...permit(`127.0.0.1:${a.port}`), "--command-permissions", "sh"],
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    expect(attemptOf(found, "get-method")).toEqual({
      status: "TypeError",
      value:
        "httpGet(url, options): options.method is not an option here (it takes headers, secretHeaders); nothing was done. " +
        "For another method or a body, use httpRequest(method, url, { body }) or httpPost(url, body)",
    });
    expect(attemptOf(found, "get-header-typo")).toEqual({
      status: "TypeError",
      value: "httpGet(url, options): options.header is not an option here (it takes headers, secretHeaders); nothing was done.",
    });
    expect(String(attemptOf(found, "post-body").value)).toBe(
      "httpPost(url, body, options): options.body is not an option here (it takes headers, secretHeaders, contentType); nothing was done. The body is httpPost's second argument",
    );
    expect(String(attemptOf(found, "request-timeout").value)).toMatch(/^httpRequest\(method, url, options\): options\.timeout is not an option here .*libraryConfig\.networkTimeoutMs/);
    expect(String(attemptOf(found, "request-string").value)).toMatch(/^httpRequest\(method, url, options\): options must be an object \(of headers, secretHeaders, contentType, body\), not a string; nothing was done/);
    expect(attemptOf(found, "request-ok")).toMatchObject({ status: "ok", value: { method: "PUT", body: "b", headers: { "x-a": "1", "content-type": "text/csv" } } });
    expect(attemptOf(found, "exec-env")).toEqual({
      status: "TypeError",
      value:
        "exec(command, args, options): options.env is not an option here (it takes cwd, timeoutMs, input); nothing was done. " +
        "A command gets tacit's own small environment (PATH, HOME, LANG, TERM): pass settings as arguments or on its input",
    });
    expect(String(attemptOf(found, "exec-timeout").value)).toMatch(/options\.timeout is not an option here .*The limit is timeoutMs, in milliseconds/);
    expect(attemptOf(found, "exec-ok")).toEqual({ status: "ok", value: `in ${root}\n` });
    for (const label of ["get-method", "get-header-typo", "post-body", "request-timeout", "request-string", "exec-env", "exec-timeout"]) {
      expect(attemptOf(found, label).status, label).toBe("TypeError");
    }
    // Nothing was sent but the request that used only the options it takes; nothing ran but that command.
    expect(a.received.map((r) => r.url)).toEqual(["/ok"]);
    expect(readdirSync(root).filter((name) => name.startsWith("MARK_"))).toEqual([]);
  });
});
