// How long a value's JSON text is, counted without making it. The host writes a map job to the
// pure evaluator as one line of JSON: made first and measured after, a job too long for the
// evaluator to read was built whole in the host's heap before it failed (see PureEvaluator.runNow).

/** Characters JSON.stringify writes as more than themselves: quotes, backslashes, controls, surrogates. */
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/** The length of JSON.stringify(text). */
function jsonStringLength(text: string): number {
  if (!ESCAPED.test(text)) return text.length + 2;
  let length = 2;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22 || code === 0x5c || code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d) length += 2;
    else if (code < 0x20) length += 6;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      length += 2;
      i++;
    } else if (code >= 0xd800 && code <= 0xdfff) length += 6;
    else length += 1;
  }
  return length;
}

/**
 * Whether JSON.stringify(value) is at most `limit` characters long, for JSON data (what JSON.parse
 * gives, and the objects the host makes of it: no undefined, functions or toJSON methods; an
 * undefined property is skipped, as JSON skips it). Walked with a stack of its own, and stops as
 * soon as the count passes `limit`, so it costs at most a walk of what fits.
 */
export function jsonLengthWithin(value: unknown, limit: number): boolean {
  let length = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === "string") length += jsonStringLength(item);
    else if (typeof item === "number") length += Number.isFinite(item) ? String(item).length : 4;
    else if (typeof item === "boolean") length += item ? 4 : 5;
    else if (item === null || typeof item !== "object") length += 4;
    else if (Array.isArray(item)) {
      // Brackets and commas; an undefined element is written null, as JSON writes it.
      length += 2 + Math.max(0, item.length - 1);
      for (const element of item) pending.push(element === undefined ? null : element);
    } else {
      const entries = Object.entries(item).filter(([, member]) => member !== undefined);
      length += 2 + Math.max(0, entries.length - 1);
      for (const [key, member] of entries) {
        length += jsonStringLength(key) + 1;
        pending.push(member);
      }
    }
    if (length > limit) return false;
  }
  return true;
}
