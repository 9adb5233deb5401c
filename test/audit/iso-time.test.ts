// The log writes its times with isoTime (line.ts), made from a date's UTC fields rather than by
// Date#toISOString, whose first call sets up the local time zone. The text must be toISOString's
// exactly: the hash covers it, and verify and the anchors take only that form.

import { describe, expect, it } from "vitest";
import { IsoTimes, isoTime, loggedTime } from "../../runner/audit/line.js";

describe("isoTime", () => {
  const edges = [
    0,
    Date.UTC(2026, 0, 2, 3, 4, 5, 678),
    Date.UTC(1999, 11, 31, 23, 59, 59, 999),
    Date.UTC(2000, 1, 29, 12, 0, 0, 1),
    Date.UTC(2024, 11, 31, 23, 59, 59, 990),
    Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    Date.UTC(0, 0, 1) - 0, // year 1900 (Date.UTC maps 0 to 1900)
    new Date("0000-01-01T00:00:00.000Z").getTime(),
    new Date("0099-03-04T05:06:07.008Z").getTime(),
    Date.now(),
  ];
  it("is Date#toISOString for times of years 0 to 9999", () => {
    for (const ms of edges) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    // Spread over the years a log may meet, every millisecond field, before and after 1970.
    for (let ms = -2_208_988_800_000; ms < 4_102_444_800_000; ms += 9_876_543_211) {
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
      expect(loggedTime.safeParse(isoTime(ms)).success).toBe(true);
    }
  });
  it("leaves years outside 0 to 9999, and invalid times, to Date#toISOString", () => {
    for (const text of ["-000001-12-31T23:59:59.999Z", "+010000-01-01T00:00:00.000Z"]) {
      const ms = new Date(text).getTime();
      expect(isoTime(ms)).toBe(text);
    }
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
  });
  it("IsoTimes gives Date#toISOString of times taken one after another, and of any other", () => {
    const times = new IsoTimes();
    const now = Date.now();
    // Within a second, across seconds, minutes, days and years, backwards, and repeated.
    const sequence = [now, now + 1, now + 9, now + 10, now + 99, now + 100, now + 999, now + 1000, now + 1001, now, now - 1];
    for (const edge of [Date.UTC(2026, 11, 31, 23, 59, 59, 998), Date.UTC(1969, 11, 31, 23, 59, 59, 999), 0, -1, 999, 1000]) {
      for (let step = -2; step <= 2; step++) sequence.push(edge + step);
    }
    for (let ms = -2_208_988_800_000; ms < 4_102_444_800_000; ms += 7_654_321_987) sequence.push(ms, ms + 1, ms + 500);
    for (const ms of sequence) expect(times.text(ms)).toBe(new Date(ms).toISOString());
    for (const text of ["-000001-12-31T23:59:59.999Z", "+010000-01-01T00:00:00.000Z"]) {
      const ms = new Date(text).getTime();
      expect(times.text(ms)).toBe(text);
      expect(times.text(ms + 1)).toBe(new Date(ms + 1).toISOString());
    }
    expect(times.text(now + 0.5)).toBe(new Date(now + 0.5).toISOString());
    expect(() => times.text(Number.NaN)).toThrow(RangeError);
  });
});
