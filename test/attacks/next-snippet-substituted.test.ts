// A session's snippet against the next one, through the real CLI (tacit repl). Each snippet is
// validated, sent to the session's sandbox, read there by the library from the host's frame and
// loaded as a module of its own. A snippet may replace built-ins' methods (its own business), and
// the library read and loaded the next snippet with them: a snippet that replaced
// Array.prototype[Symbol.iterator] (which Blob's constructor iterates its parts with), JSON.parse,
// TextDecoder's decode or String's slice, or defined a setter on Array.prototype for an index, had the next snippet's module made of code of its own,
// which the validator had never seen: it reached globalThis, process, fetch and WebAssembly.

import { describe, expect, it } from "vitest";
import { runCli } from "../helpers.js";

/** What runs in place of the next snippet, were it substituted: code the validator refuses (globalThis). */
const PAYLOAD = 'println("unvalidated code ran:", typeof globalThis);';
const SECOND = 'println("the second snippet ran as sent")';

/** First snippets (one line each), each replacing a built-in so as to put PAYLOAD in the second's place. */
const SUBSTITUTIONS: Record<string, string> = {
  "Array.prototype[Symbol.iterator] (Blob's parts)":
    "const iterate = Array.prototype[Symbol.iterator]; (Array.prototype as any)[Symbol.iterator] = function (this: unknown[]) { " +
    `const one = this.length === 1 && typeof this[0] === "string" && (this[0] as string).includes("as sent") && (this[0] as string).includes("println"); ` +
    `return iterate.call(one ? [${JSON.stringify(PAYLOAD)}] : this); };`,
  "JSON.parse (the host's frame)":
    "const parse = JSON.parse; (JSON as any).parse = (text: string) => { const value = parse(text); " +
    `if (value && value.type === "next") value.code = ${JSON.stringify(PAYLOAD)}; return value; };`,
  "TextDecoder's decode (the frame's bytes)":
    "const decode = TextDecoder.prototype.decode; (TextDecoder.prototype as any).decode = function (this: TextDecoder, ...args: any[]) { " +
    `const text = decode.apply(this, args as any); return text.includes('"type":"next"') ? JSON.stringify({ type: "next", code: ${JSON.stringify(PAYLOAD)}, displayName: "x.ts" }) + "\\n" : text; };`,
  "String.prototype.slice (the frame's line)":
    "const slice = String.prototype.slice; (String.prototype as any).slice = function (this: string, ...args: any[]) { " +
    `const text = slice.apply(this, args as any); return text.startsWith('{"type":"next"') ? JSON.stringify({ type: "next", code: ${JSON.stringify(PAYLOAD)}, displayName: "x.ts" }) : text; };`,
  "a setter on Array.prototype for an index (the pieces of a long frame's line)":
    `Object.defineProperty(Array.prototype, "1", { configurable: true, set(this: unknown[], piece: unknown) { ` +
    `const forged = typeof piece === "string" && piece.startsWith('{"type":"next"') ? ${JSON.stringify(`{"type":"next","code":${JSON.stringify(PAYLOAD)},"rest":"`)} + piece.slice(piece.indexOf('"code":"') + 8) : piece; ` +
    `Object.defineProperty(this, "1", { value: forged, writable: true, enumerable: true, configurable: true }); } });`,
};

/** The second snippet, long enough (a comment of 100,000 characters) that its frame arrives in several reads. */
const LONG_SECOND = `${SECOND} // ${"a".repeat(100_000)}`;

describe.concurrent("a snippet that replaces what the library reads and loads the next snippet with", () => {
  it.each(Object.entries(SUBSTITUTIONS))("cannot put code of its own in the next one's place: %s", async (_what, first) => {
    // A frame's line is taken whole from one read, or joined from the pieces of several.
    const second = first.includes("Array.prototype, \"1\"") ? LONG_SECOND : SECOND;
    const r = await runCli(["repl"], { input: `${first}\n${second}\n` });
    expect(r.stdout + r.stderr).not.toContain("unvalidated code ran");
    expect(r.stdout).toContain("the second snippet ran as sent");
  });
});
