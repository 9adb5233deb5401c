import { describe, expect, it } from "vitest";
import { printable } from "../../runner/printable.js";
import { shownText } from "../../runner/approval/shown-text.js";

describe("shownText", () => {
  it("shows a text whole when it fits, as a JSON string", () => {
    expect(shownText("writing", "a\nb", 100)).toBe('writing (3 characters): "a\\nb"');
    expect(shownText("writing", "", 100)).toBe('writing (0 characters): ""');
  });

  it("cuts a long text to its beginning, saying so first, within the budget as shown", () => {
    const text = "x".repeat(5000);
    const shown = shownText("writing", text, 300);
    expect(shown).toMatch(/^writing \(5000 characters; only the first (\d+) are shown, the rest is not\): "x+"$/);
    expect(printable(shown).length).toBeLessThanOrEqual(300);
    const count = Number(/only the first (\d+)/.exec(shown)![1]);
    expect(shown.endsWith(`"${"x".repeat(count)}"`)).toBe(true);
    expect(count).toBeGreaterThan(200);
  });

  it("counts what printable() escapes at its shown length", () => {
    const text = "\u202e".repeat(1000);
    const shown = shownText("with a body", text, 200);
    expect(printable(shown).length).toBeLessThanOrEqual(200);
    expect(shown).toContain("the rest is not");
  });

  it("measures no more of a long text than could be shown", () => {
    const text = "a".repeat(50_000_000);
    const shown = shownText("writing", text, 2000);
    expect(shown.length).toBeLessThan(2000);
    expect(shown).toContain("(50000000 characters; only the first ");
  });

  it("never cuts a surrogate pair in half", () => {
    const text = "😀".repeat(500);
    for (const budget of [120, 121, 122, 123]) {
      const shown = shownText("writing", text, budget);
      const quoted = JSON.parse(shown.slice(shown.indexOf(": ") + 2)) as string;
      expect(quoted).toBe("😀".repeat(quoted.length / 2));
    }
  });

  it("shows nothing of the text when there is no room, still saying how long it is", () => {
    expect(shownText("writing", "abc", 5)).toBe('writing (3 characters; only the first 0 are shown, the rest is not): ""');
  });
});
