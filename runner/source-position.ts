// Offsets (UTF-16 code units, as the parser reports them) to 1-based line:column. Line
// breaks are ECMAScript's: \n, \r\n, a lone \r, U+2028 and U+2029 (as tsc and V8 count).

export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 13 && text.charCodeAt(i + 1) === 10) continue; // \r\n: the \n ends the line
    if (c === 10 || c === 13 || c === 0x2028 || c === 0x2029) starts.push(i + 1);
  }
  return starts;
}

export function lineColumnOf(starts: readonly number[], offset: number): { line: number; column: number } {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if ((starts[mid] ?? 0) <= offset) low = mid;
    else high = mid - 1;
  }
  return { line: low + 1, column: offset - (starts[low] ?? 0) + 1 };
}
