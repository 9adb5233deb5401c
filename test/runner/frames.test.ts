// The host's check of every frame the sandbox sends (runner/frames.ts): the envelope, then
// the action against the schema of its own kind. Anything else is a protocol error.

import { describe, expect, it } from "vitest";
import { MAX_PRINT_PARTS } from "../../library/protocol.js";
import { parsePureReply, parseSandboxFrame, ProtocolError } from "../../runner/frames.js";

const request = (action: unknown, id: unknown = 1) => JSON.stringify({ type: "request", id, action });

describe("sandbox frames", () => {
  it("accepts each kind of frame the protocol has", () => {
    expect(parseSandboxFrame(request({ kind: "Print", parts: ["hi\n", { classified: "c1" }] }))).toEqual({
      type: "request",
      id: 1,
      action: { kind: "Print", parts: ["hi\n", { classified: "c1" }] },
    });
    expect(parseSandboxFrame(request({ kind: "FsRead", scope: "s", path: "/a", as: "text" }, 7)).type).toBe("request");
    expect(parseSandboxFrame(request({ kind: "Exec", scope: "s", command: "git", args: ["status"], cwd: null, timeoutMs: null, input: null })).type).toBe("request");
    expect(parseSandboxFrame(JSON.stringify({ type: "post", action: { kind: "Print", parts: ["hi\n", { classified: "c1" }] } }))).toEqual({
      type: "post",
      action: { kind: "Print", parts: ["hi\n", { classified: "c1" }] },
    });
    expect(parseSandboxFrame(JSON.stringify({ type: "done" }))).toEqual({ type: "done" });
    expect(parseSandboxFrame(JSON.stringify({ type: "failed", error: { name: "E", message: "m", stack: "s" } })).type).toBe("failed");
  });

  it.each([
    ["not JSON", "{ nope", /not a protocol frame/],
    ["an unknown frame type", JSON.stringify({ type: "reply", id: 1 }), /malformed frame/],
    // Only printing is posted: anything else waits for its answer, as a request.
    ["a post of an action that is not printing", JSON.stringify({ type: "post", action: { kind: "FsRead", scope: "s", path: "/a", as: "text" } }), /malformed frame/],
    ["a post with an id", JSON.stringify({ type: "post", id: 1, action: { kind: "Print", parts: [] } }), /malformed frame/],
    ["a post of more parts than a print holds", JSON.stringify({ type: "post", action: { kind: "Print", parts: Array.from({ length: MAX_PRINT_PARTS + 1 }, () => "x") } }), /malformed frame/],
    ["an unknown action kind", request({ kind: "Spawn", command: "sh" }), /unknown action kind "Spawn"/],
    ["an inherited property as the kind", request({ kind: "constructor" }), /unknown action kind "constructor"/],
    ["a kind that is not a string", request({ kind: 1 }), /malformed frame/],
    ["an action that is not an object", request("FsRead"), /an action without a kind/],
    ["an action that is null", request(null), /an action without a kind/],
    ["an action that is an array", request(["Print"]), /an action without a kind/],
    ["an action with no kind", request({ scope: "s", path: "/a", as: "text" }), /an action without a kind/],
    ["a request without an action", JSON.stringify({ type: "request", id: 1 }), /malformed frame|an action without a kind/],
    ["a kind given as __proto__", '{"type":"request","id":1,"action":{"__proto__":"Print","kind":"__proto__"}}', /unknown action kind "__proto__"/],
    ["an action with a field its kind does not have", request({ kind: "Print", parts: [], extra: 1 }), /malformed frame/],
    ["an action with a field of the wrong type", request({ kind: "FsRead", scope: "s", path: 1, as: "text" }), /malformed frame/],
    ["an action missing a field", request({ kind: "FsRead", scope: "s", as: "text" }), /malformed frame/],
    ["a request id that is not a positive integer", request({ kind: "ReadInput" }, 0), /malformed frame/],
    ["a frame with an extra field", JSON.stringify({ type: "done", also: true }), /malformed frame/],
    // A request of a known kind is checked whole in one parse: its envelope as strictly as any.
    ["a request of a known kind with an extra field", JSON.stringify({ type: "request", id: 1, action: { kind: "ReadInput" }, also: true }), /malformed frame/],
    ["a request of a known kind with an id that is not a number", request({ kind: "FsRead", scope: "s", path: "/a", as: "text" }, "1"), /malformed frame/],
    ["a request of a known kind with a negative id", request({ kind: "FsRead", scope: "s", path: "/a", as: "text" }, -3), /malformed frame/],
    ["a request of a known kind with a fractional id", request({ kind: "Print", parts: [] }, 1.5), /malformed frame/],
    ["a path longer than the protocol allows", request({ kind: "FsRead", scope: "s", path: "/" + "a".repeat(5000), as: "text" }), /malformed frame/],
    ["a read of a third kind", request({ kind: "FsRead", scope: "s", path: "/a", as: "json" }), /malformed frame/],
  ])("refuses %s", (_what, line, message) => {
    expect(() => parseSandboxFrame(line)).toThrow(ProtocolError);
    expect(() => parseSandboxFrame(line)).toThrow(message);
  });

  it("counts a request's headers, a map's captured names and a print's parts before checking any of them", () => {
    // Checked one by one, 300,000 header keys held the host's main thread about 2.5 s a frame.
    const entries = (count: number, value: unknown) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, value]));
    const http = (headers: Record<string, unknown>, secretHeaders: Record<string, unknown> = {}) =>
      request({ kind: "HttpRequest", scope: "s", method: "GET", url: "http://127.0.0.1/", headers, secretHeaders, body: null, classifiedBody: null });
    expect(parseSandboxFrame(http(entries(1000, "v"))).type).toBe("request");
    expect(() => parseSandboxFrame(http(entries(1001, "v")))).toThrow(/malformed frame \(more than 1000 headers\)/);
    expect(() => parseSandboxFrame(http({}, entries(300_000, "h")))).toThrow(/malformed frame \(more than 1000 secret headers\)/);
    const map = (captures: Record<string, unknown>) => request({ kind: "ClassifiedMap", handle: "c1", source: "(x) => x", captures, flat: false });
    expect(parseSandboxFrame(map(entries(10_000, { plain: 1 }))).type).toBe("request");
    expect(() => parseSandboxFrame(map(entries(10_001, { plain: 1 })))).toThrow(/malformed frame \(more than 10000 captured names\)/);
    const print = (count: number) => request({ kind: "Print", parts: Array.from({ length: count }, () => ({ classified: "c1" })) });
    expect(parseSandboxFrame(print(MAX_PRINT_PARTS)).type).toBe("request");
    expect(() => parseSandboxFrame(print(MAX_PRINT_PARTS + 1))).toThrow(/malformed frame \(Too big: expected array to have <=10000 items\)/);
    // Still a record: an array in its place is refused as before.
    expect(() => parseSandboxFrame(http(["v"] as unknown as Record<string, unknown>))).toThrow(ProtocolError);
  });

  it("checks the pure evaluator's replies too", () => {
    expect(parsePureReply(JSON.stringify({ id: 1, ok: true, value: 2 }))).toEqual({ id: 1, ok: true, value: 2 });
    expect(() => parsePureReply(JSON.stringify({ id: 1, ok: true, value: 2, more: 1 }))).toThrow(ProtocolError);
  });
});
