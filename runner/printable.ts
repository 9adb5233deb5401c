// Text that came from agent code (paths, arguments, URLs) made safe to show a person on a
// terminal: control characters (escape sequences, line breaks that could fake a line of a
// question or a log), line and paragraph separators, zero-width characters and bidi
// overrides are shown as \uXXXX escapes.

export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
