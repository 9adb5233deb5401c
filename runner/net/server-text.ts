// How a message about an answer is built: tacit's and Node's words and what the script named as
// they are, and only what a server chose (a redirect's URL or raw Location, a charset's or a
// content coding's name, a certificate's names) redacted of the secrets the request carried, as
// it is put in. A message redacted whole masked tacit's own words as well: a script made a secret
// header "among" or not, as a bit of a classified value said, had a permitted host redirect it out
// of the scope, and read "… is not [redacted] the hosts …" or "… is not among the hosts …": the
// secret, a bit per request. The words of a template cannot be a server's echo, so they are never
// masked; the pieces a server chose are redacted on their own, whatever words surround them.

import { REDACTED } from "./redaction.js";

/** A text a server chose, to be redacted before it is put into a message; `shown` formats the redacted text (quoted, shortened). */
export class ServerChosen {
  constructor(
    readonly text: string,
    readonly shown: (redacted: string) => string = (redacted) => redacted,
  ) {}
}

/** Marks a text a server chose (see ServerChosen). */
export function chosen(text: string, shown?: (redacted: string) => string): ServerChosen {
  return new ServerChosen(text, shown);
}

/** A text in parts: its own words, and pieces a server chose (see quoting). */
export type Parts = ReadonlyArray<string | ServerChosen>;

/** What a message may hold: its words, a number, a server's piece, or a text in parts. */
export type MessageValue = string | number | ServerChosen | Parts;

/** A tagged template that builds a message, redacting only the ServerChosen pieces in it. */
export type Said = (words: TemplateStringsArray, ...values: readonly MessageValue[]) => string;

/** The Said of one request: `redactServerText` takes a server's piece and masks the secrets the request carried in it. */
export function sayer(redactServerText: (text: string) => string): Said {
  const render = (value: MessageValue): string => {
    if (value instanceof ServerChosen) return value.shown(redactServerText(value.text));
    if (typeof value === "string" || typeof value === "number") return String(value);
    return value.map(render).join("");
  };
  return (words, ...values) => words.reduce((message, word, i) => message + render(values[i - 1]!) + word);
}

/**
 * A text someone else worded (Node's message of a failure) that quotes texts a server chose (the
 * host of a redirect it followed, its certificate's names): those, wherever they stand in it, are
 * the pieces to redact; the rest is kept as it is. The longest piece first where two start at once.
 */
export function quoting(text: string, pieces: readonly string[]): Parts {
  const known = [...new Set(pieces)].filter((piece) => piece.length > 0).sort((a, b) => b.length - a.length);
  const parts: Array<string | ServerChosen> = [];
  let from = 0;
  for (let at = 0; at < text.length; ) {
    const piece = known.find((candidate) => text.startsWith(candidate, at));
    if (piece === undefined) {
      at++;
      continue;
    }
    if (at > from) parts.push(text.slice(from, at));
    parts.push(chosen(piece));
    at += piece.length;
    from = at;
  }
  if (from < text.length) parts.push(text.slice(from));
  return parts;
}

/** A redacted text's first `length` characters, the whole of a mask the cut would fall inside ("[reda…" says nothing). */
export function firstChars(redacted: string, length: number): string {
  if (redacted.length <= length) return redacted;
  const mask = redacted.lastIndexOf(REDACTED, length - 1);
  return redacted.slice(0, mask !== -1 && mask + REDACTED.length > length ? mask + REDACTED.length : length);
}

/** The Said of a message with no piece a server chose (the script's own URL, checked before anything is sent). */
export const sayAsIs: Said = sayer((text) => text);
