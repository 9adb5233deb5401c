// The host's check of every frame the sandbox sends (runner/frames.ts): the envelope, then
// the action against the schema of its own kind. Anything else is a protocol error.

import { describe, expect, it } from "vitest";
import { MAX_PRINT_PARTS } from "../../library/protocol.js";
import { checkedBySchemas, FLAT_ACTION_KINDS, flatRequestOf, parsePureReply, parseSandboxFrame, ProtocolError } from "../../runner/frames.js";

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

describe("flat requests, checked by hand (flatRequestOf)", () => {
  // A valid action of each kind checked by hand, and what each of its fields may be (the schema's limits).
  const valid: Record<string, Record<string, unknown>> = {
    FsRead: { kind: "FsRead", scope: "s", path: "/a/b.txt", as: "text" },
    FsStat: { kind: "FsStat", scope: "s", path: "/a" },
    FsSize: { kind: "FsSize", scope: "s", path: "/a" },
    FsWrite: { kind: "FsWrite", scope: "s", path: "/a", content: "text", append: false },
    FsDelete: { kind: "FsDelete", scope: "s", path: "/a" },
    FsMkdir: { kind: "FsMkdir", scope: "s", path: "/a" },
    FsList: { kind: "FsList", scope: "s", path: "/a", recursive: true },
    CloseScope: { kind: "CloseScope", scope: "s" },
  };
  const values: unknown[] = [
    null, 0, 1, -1, 1.5, true, false, "", "x", "text", "bytes", "json", "TEXT", [], ["text"], {}, { kind: "FsRead" },
    "a".repeat(64), "a".repeat(256), "a".repeat(257), "a".repeat(4096), "a".repeat(4097), "é".repeat(4096), "😀".repeat(2048), "😀".repeat(2049),
  ];
  const ids: unknown[] = [1, 7, 2 ** 53 - 1, 2 ** 53, 0, -1, 1.5, 1e21, "1", null, true, [1], {}];
  const line = (frame: unknown): string => JSON.stringify(frame);
  /** Each frame a hostile sandbox could send in place of `action`'s: every field missing, of every value, and keys added. */
  function variants(action: Record<string, unknown>): string[] {
    const { kind, ...fields } = action;
    const frame = (a: unknown, id: unknown = 1) => ({ type: "request", id, action: a });
    const out: string[] = [line(frame(action))];
    for (const id of ids) out.push(line(frame(action, id)));
    for (const name of Object.keys(fields)) {
      const { [name]: _dropped, ...without } = action;
      out.push(line(frame(without)));
      for (const value of values) out.push(line(frame({ ...action, [name]: value })));
    }
    for (const kindValue of [kind, `${String(kind)} `, String(kind).toLowerCase(), "Print", "FsReadChunk", "toString", "__proto__", 1, null, ["FsRead"]]) {
      out.push(line(frame({ ...action, kind: kindValue })));
    }
    // Keys beyond the schema's: an ordinary one, and __proto__ and constructor as own keys (JSON.parse makes them so).
    const text = line(frame(action));
    out.push(line(frame({ ...action, extra: 1 })), line(frame({ ...action, constructor: "x" })));
    out.push(text.replace(/}}$/, ',"__proto__":{"kind":"Print"}}}'), text.replace(/}}$/, '},"__proto__":{}}'), text.replace(/}}$/, '},"extra":1}'));
    out.push(text.replace('"action":{', '"action":{"__proto__":{"scope":"s"},'));
    // The envelope: other types, fields missing, in another order, and actions that are not objects.
    out.push(line({ type: "post", action }), line({ type: "Request", id: 1, action }), line({ id: 1, action }), line({ type: "request", action }));
    out.push(line({ action, id: 1, type: "request" }), line({ type: "request", id: 1, action: [action] }), line({ type: "request", id: 1, action: null }));
    out.push(line({ type: "request", id: 1, action: JSON.stringify(action) }), line([action]), line(null), line("request"));
    // Keys of the action in another order.
    out.push(line(frame(Object.fromEntries(Object.entries(action).reverse()))));
    return out;
  }

  it("checks by hand the kinds the test knows, and no other", () => {
    expect([...FLAT_ACTION_KINDS].sort()).toEqual(Object.keys(valid).sort());
  });

  it.each(Object.keys(valid))("accepts only what the %s schema accepts, and returns what it returns", (kind) => {
    let byHand = 0;
    for (const text of variants(valid[kind]!)) {
      const json: unknown = JSON.parse(text);
      const fast = flatRequestOf(json);
      let bySchema: unknown;
      try {
        bySchema = checkedBySchemas(JSON.parse(text), text);
      } catch (error) {
        if (!(error instanceof ProtocolError)) throw error;
        bySchema = "refused";
      }
      if (fast === null) {
        // Declined: parseSandboxFrame then answers as the schemas do.
        if (bySchema === "refused") expect(() => parseSandboxFrame(text), text).toThrow(ProtocolError);
        else expect(JSON.stringify(parseSandboxFrame(text)), text).toBe(JSON.stringify(bySchema));
        continue;
      }
      byHand++;
      expect(bySchema, `accepted by hand, refused by the schema: ${text.slice(0, 200)}`).not.toBe("refused");
      // The same value, keys in the same order (a session's replay compares actions as JSON).
      expect(JSON.stringify(fast), text.slice(0, 200)).toBe(JSON.stringify(bySchema));
      expect(JSON.stringify(parseSandboxFrame(text))).toBe(JSON.stringify(bySchema));
    }
    // What the stub sends, and the longest strings the schema allows, are checked by hand.
    expect(flatRequestOf(JSON.parse(line({ type: "request", id: 1, action: valid[kind] })))).not.toBeNull();
    expect(byHand).toBeGreaterThan(5);
  });
});
