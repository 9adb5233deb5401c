// Bytes cut at a size limit, read as UTF-8 text: without the sequence the cut left unfinished.

/**
 * The bytes without a UTF-8 sequence a size limit cut short. Read as text, a cut one became
 * U+FFFD, which no form of a secret holds at that place: a security review had a server reflect
 * "ä<canary>ö…" with the cut inside "ö", and the answer ended with the secret up to there
 * unredacted (redaction masks a text that ends partway into a secret, not one that ends in
 * something else). A command's output cut so would also be taken for output that is not UTF-8.
 */
export function wholeCharacters(bytes: Buffer): Buffer {
  for (let back = 1; back <= Math.min(4, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if (byte < 0x80) return bytes; // ASCII: nothing cut.
    if (byte >= 0xc0) {
      // A lead byte: drop its sequence when the bytes it needs are not all there.
      const needs = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
      return needs > back ? bytes.subarray(0, bytes.length - back) : bytes;
    }
  }
  return bytes;
}
