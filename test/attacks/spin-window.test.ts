// Frames the host reads spinning (runner/spin-read.ts): right after a reply it reads the
// sandbox's stdout itself, and what it reads there goes through the same frame splitter and
// checks as what the event loop delivers. Code with the raw channel splits its frames at every
// byte around that window, and sends invalid UTF-8, a report and frames after it there: each is
// read as a whole frame once, or refused, exactly as without spinning. The window is hit only
// where the sandbox writes within the host's 30 µs (and the host is not backing off after a
// miss): on the loaded 2-core machine these were written on, a few of each run's 75 cut frames
// were read spinning (61 and 62 bytes, counted with a temporary line in readSpinning), the rest
// through the event loop; both must give the same result, so the assertions hold either way.

import { describe, expect, it } from "vitest";
import { runBypassed } from "../helpers.js";
import { lit } from "./fixtures.js";

// Spin wherever a CPU is free for it, however loaded the machine: otherwise the window these
// tests aim at is not opened on a busy CI machine (read once, at the host's first wait).
process.env.TACIT_SPIN = "always";

const encoder = new TextEncoder();
const requestOf = (id: number, parts: string[]): string => JSON.stringify({ type: "request", id, action: { kind: "Print", parts } }) + "\n";
const bytesLiteral = (bytes: Uint8Array): string => `new Uint8Array(${JSON.stringify([...bytes])})`;

/**
 * Raw-channel code: sends request 1, then for each of `frames` reads the previous reply, writes the
 * frame's first `cuts[i]` bytes at once (when the host reads spinning), and the rest 20 ms later
 * (through the host's event loop); then reads the last reply and prints "end". The 20 ms are
 * waited (Atomics.wait), not spun: a spin held a core 1.5 s a run, from the host among others.
 */
function splitAfterReplies(frames: Uint8Array[], cuts: number[]): string {
  return `
const w = (b) => { for (let o = 0; o < b.length; ) o += Deno.stdout.writeSync(b.subarray(o)); };
const buf = new Uint8Array(1 << 16);
const reply = () => { let text = ""; while (!text.includes("\\n")) text += new TextDecoder().decode(buf.subarray(0, Deno.stdin.readSync(buf))); return JSON.parse(text); };
const pauseCell = new Int32Array(new SharedArrayBuffer(4));
const pause = (ms) => { Atomics.wait(pauseCell, 0, 0, ms); };
const frames = [${frames.map(bytesLiteral).join(", ")}];
const cuts = ${JSON.stringify(cuts)};
w(new TextEncoder().encode(${lit(requestOf(1, ["one\n"]))}));
for (let i = 0; i < frames.length; i++) {
  reply();
  w(frames[i].subarray(0, cuts[i]));
  pause(20);
  w(frames[i].subarray(cuts[i]));
}
reply();
println("end");
`;
}

describe("frames split around the host's spinning read (the raw channel)", () => {
  it("a frame with multi-byte characters, cut at every byte, is read whole each time and printed intact", async () => {
    const text = "€😀\n";
    const template = encoder.encode(requestOf(10, [text]));
    const frames: Uint8Array[] = [];
    const cuts: number[] = [];
    for (let cut = 1; cut < template.length; cut++) {
      frames.push(encoder.encode(requestOf(10 + cut, [text])));
      cuts.push(cut);
    }
    const result = await runBypassed(splitAfterReplies(frames, cuts), { keepRuntime: true });
    expect(result.outcome, result.error ?? "").toBe("ok");
    expect(result.stdout).toBe(`one\n${text.repeat(frames.length)}end\n`);
  });

  it("invalid UTF-8 cut between the spinning read and the event loop's ends the evaluation; nothing after it is printed", async () => {
    const canary = `UTF8-SPUN-${Date.now()}`;
    const [head, tail] = requestOf(2, ["@", canary]).split("@") as [string, string];
    const frame = new Uint8Array([...encoder.encode(head), 0xe2, 0x28, 0xa1, ...encoder.encode(tail)]);
    const invalidAt = encoder.encode(head).length;
    for (const cut of [invalidAt, invalidAt + 1, invalidAt + 2, invalidAt + 3]) {
      const result = await runBypassed(splitAfterReplies([frame], [cut]), { keepRuntime: true });
      expect(result.outcome, `cut at ${cut}: ${result.error ?? ""}`).toBe("protocol-error");
      expect(result.error).toMatch(/bytes that are not UTF-8/);
      expect(result.stdout).not.toContain(canary);
      expect(result.stdout).not.toContain("end");
    }
  });

  it("a report and a request after it, read together spinning, end the evaluation; the request is never carried out", async () => {
    const canary = `AFTER-DONE-${Date.now()}`;
    const code = `
const w = (b) => { for (let o = 0; o < b.length; ) o += Deno.stdout.writeSync(b.subarray(o)); };
const buf = new Uint8Array(1 << 16);
w(new TextEncoder().encode(${lit(requestOf(1, ["one\n"]))}));
let text = "";
while (!text.includes("\\n")) text += new TextDecoder().decode(buf.subarray(0, Deno.stdin.readSync(buf)));
w(new TextEncoder().encode(${lit(JSON.stringify({ type: "done" }) + "\n" + requestOf(2, [canary]))}));
Deno.stdin.readSync(buf);
`;
    const result = await runBypassed(code, { keepRuntime: true });
    expect(result.outcome, result.error ?? "").toBe("protocol-error");
    expect(result.error).toMatch(/after reporting its result/);
    expect(result.stdout).toBe("one\n");
  });
});
