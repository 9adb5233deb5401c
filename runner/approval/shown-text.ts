// What an asked-about action carries, as its question shows it: a file's new content, a
// request's body. A person approving "fs.write .bashrc" or "POST https://api.example.com/x"
// decides on what is written or sent as much as on where.

import { printable } from "../printable.js";

/**
 * `text` with each backslash written twice, for what a question or `tacit approvals list` shows
 * as it is (a pattern, a path; not a JSON string, which escapes its backslashes itself). Shown as
 * itself, a backslash made printable()'s escapes ambiguous: a file named "a\nb" and one named
 * "a\\u000ab" (a backslash, then "u000a") both read "a\u000ab".
 */
export function backslashesDoubled(text: string): string {
  return text.replace(/\\/g, "\\\\");
}

/**
 * A pattern (or directory) as a question and `tacit approvals list` show it: printable()'s escapes,
 * and a backslash as \\ (see backslashesDoubled), so that each shown line names one pattern and a
 * person can find the one they were asked about in the list. Listed with a backslash as itself,
 * approvals for "a\nb" and "a\\u000ab" were the same line, and revoke given that line removed both.
 */
export function shownPattern(text: string): string {
  return printable(backslashesDoubled(text));
}

/** A text as the question shows it: a JSON string (line breaks as \n), with printable()'s escapes. */
function shownLength(text: string): number {
  return printable(JSON.stringify(text)).length;
}

/**
 * `label` and `text` for a question, in at most about `budget` characters as shown: whole when
 * it fits, else its beginning, the question saying first how much is not shown (a client that
 * cuts a long message short cuts its end, never that statement).
 */
export function shownText(label: string, text: string, budget: number): string {
  const whole = `${label} (${text.length} characters): `;
  // Each character shows as one at least: a text longer than the budget is not measured whole
  // (a 100 MB write asked about would be escaped whole on the host's main thread first).
  if (text.length < budget && whole.length + shownLength(text) <= budget) return whole + JSON.stringify(text);
  const room = budget - `${label} (${text.length} characters; only the first ${text.length} are shown, the rest is not): `.length;
  // The longest beginning that fits: each character takes at least one as shown, so no more than `room`.
  let low = 0;
  let high = Math.max(0, Math.min(text.length, room));
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (shownLength(text.slice(0, middle)) <= room) low = middle;
    else high = middle - 1;
  }
  // Never half a surrogate pair (it would show as an escape of nothing).
  const cut = low > 0 && /[\ud800-\udbff]/.test(text[low - 1]!) ? low - 1 : low;
  return `${label} (${text.length} characters; only the first ${cut} are shown, the rest is not): ${JSON.stringify(text.slice(0, cut))}`;
}

/** `head`, then `label` and `text` as shownText gives them in what is left of `room` after `head`. */
export function headThenShown(head: string, label: string, text: string, room: number): string {
  return `${head}, ${shownText(label, text, room - printable(head).length - 2)}`;
}
