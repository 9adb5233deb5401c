// The writer makes its lines as bytes (line-bytes.ts); verify reads them with line.ts's
// definitions. Each line, its hash and its chain must be exactly those: checked here against
// lineText, eventHashOfJson and chainOf, for the texts an event can hold (non-ASCII, the C1
// controls lineText escapes, a lone surrogate) and for a batch that fills its buffer.

import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../runner/audit/digest.js";
import { LineBytes } from "../../runner/audit/line-bytes.js";
import { chainOf, eventHashOfJson, lineText, ZERO_CHAIN } from "../../runner/audit/line.js";

const TIME = "2026-12-05T07:05:01.566Z";

const events: Record<string, unknown> = {
  ascii: { action: 2, evaluation: "e", kind: "FsRead", pattern: "fs.read /w/f0.txt", tier: "allow", type: "action-requested" },
  "non-ASCII": { action: 3, pattern: "fs.write /tmp/ä/ü/😀", type: "action-requested" },
  "C1 controls and DEL": { reason: "x\u009d52;c;aGk=\u009c\u007f\u001b[1A", type: "decision" },
  "lone surrogate": { pattern: "fs.read /a\ud800b", type: "action-requested" },
  long: { commandLine: `rm ${"-v ".repeat(60_000)}important`, type: "action-requested" },
};

describe("lines made as bytes", () => {
  it("are lineText's lines, with eventHashOfJson's hash and chainOf's chain", () => {
    const lines = new LineBytes(4096);
    let prev = ZERO_CHAIN;
    let expected = "";
    let seq = 0;
    for (const [name, event] of Object.entries(events)) {
      seq += name === "long" ? 1_000_000 : 1;
      const eventJson = canonicalJson(event);
      const hash = eventHashOfJson(seq, TIME, eventJson);
      const chain = chainOf(prev, hash);
      let made = lines.add(seq, JSON.stringify(TIME), eventJson, prev);
      if (made === false) {
        expect(lines.lines, name).toBeGreaterThan(0);
        expect(lines.take().toString("utf8")).toBe(expected);
        expected = "";
        made = lines.add(seq, JSON.stringify(TIME), eventJson, prev);
      }
      expect(made, name).toEqual({ hash, chain });
      expected += `${lineText(seq, TIME, eventJson, prev, hash, chain)}\n`;
      prev = chain;
    }
    expect(lines.take().toString("utf8")).toBe(expected);
    expect(lines.lines).toBe(0);
  });

  it("fill a buffer, then the next line waits for it to be taken", () => {
    const lines = new LineBytes(1024);
    const eventJson = canonicalJson(events.ascii);
    let prev = ZERO_CHAIN;
    let seq = 1;
    let made = lines.add(seq, JSON.stringify(TIME), eventJson, prev);
    while (made !== false) {
      prev = made.chain;
      made = lines.add(++seq, JSON.stringify(TIME), eventJson, prev);
    }
    const held = lines.lines;
    expect(held).toBeGreaterThan(0);
    const text = lines.take().toString("utf8");
    expect(text.split("\n").length - 1).toBe(held);
    expect(text.endsWith(`"chain":"${prev}"}\n`)).toBe(true);
  });
});
