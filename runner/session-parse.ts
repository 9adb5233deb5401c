// A session's program, parsed a snippet at a time. The checks see a session as one program:
// its successful snippets, each followed by "\n;\n", then the new one. Parsing that whole text
// again on every call was most of what made a long session slow (200 eight-line snippets:
// about 40 ms of each call's 90 ms of validation went to parsing the earlier ones again).
// Here each successful snippet is parsed once, as it stands in that text, and its statements
// kept with their positions there; a call parses only its new snippet, in the same context,
// and joins the two. The result is the whole text's parse, node for node (the tests compare
// them): after "\n;\n" the parser is at the start of a statement with nothing carried over,
// so a piece parsed behind that same "\n;\n" comes out as it does in the whole.

import { parseSync, type ParsedProgram, PROGRAM_OPTIONS } from "./parser.js";

/** Put before a piece that does not start the program: the end of the snippet before it. */
const CONTEXT = "\n;\n";

/**
 * Snippet text kept parsed, at most, by one session and by all of them together: the
 * statements take about 50 bytes of heap per character of text (measured: 51 MB for 1 MB of
 * eight-line snippets), and a server keeps up to 100 sessions. Past either, a session's
 * calls parse the whole program again, as before.
 */
const KEPT_CHARS = 256 * 1024;
const KEPT_CHARS_IN_ALL = 2 * 1024 * 1024;
let keptInAll = 0;

type Comment = ParsedProgram["comments"][number];

interface Positioned {
  start: number;
  end: number;
  range?: [number, number];
}

/** Moves every node and comment of a freshly parsed piece by `delta` (iteratively: snippets may nest deep). */
function shift(roots: readonly unknown[], delta: number): void {
  const pending: unknown[] = [...roots];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value !== "object" || value === null) continue;
    if (Array.isArray(value)) {
      for (const item of value) pending.push(item);
      continue;
    }
    const node = value as Partial<Positioned> & Record<string, unknown>;
    for (const key in node) {
      const child = node[key];
      if (key === "range" && Array.isArray(child)) {
        child[0] += delta;
        child[1] += delta;
      } else if ((key === "start" || key === "end") && typeof child === "number") {
        node[key] = child + delta;
      } else if (typeof child === "object" && child !== null) {
        pending.push(child);
      }
    }
  }
}

interface Piece {
  statements: unknown[];
  comments: Comment[];
  hashbang: unknown;
}

/** `text` parsed where it stands at `offset` in the session's program; null if it does not parse. */
function parsePiece(text: string, offset: number): Piece | null {
  const behind = offset === 0 ? "" : CONTEXT;
  const parsed = parseSync("script.ts", behind + text, PROGRAM_OPTIONS);
  if (parsed.errors.length > 0) return null;
  const program = parsed.program as unknown as { body: unknown[]; hashbang: unknown };
  // The context's own ";" is the first statement; in the program it belongs to the snippet before.
  const statements = behind === "" ? program.body : program.body.slice(1);
  const comments = [...parsed.comments];
  const delta = offset - behind.length;
  if (delta !== 0) shift([statements, comments], delta);
  return { statements, comments, hashbang: program.hashbang };
}

export class SessionParse {
  private statements: unknown[] = [];
  private comments: Comment[] = [];
  private hashbang: unknown = null;
  /** The length of the program's text so far: every successful snippet with its "\n;\n". */
  private length = 0;
  private kept = true;
  /**
   * Successful snippets not parsed yet: parsed once the call has answered (a paced client
   * waits for none of it), or by the next call if it comes first.
   */
  private pending: string[] = [];
  private parseScheduled = false;

  /**
   * The parse of the program with `fresh` as its new snippet, or null where this cannot give
   * it (the snippet does not parse, or the session is past what is kept): the caller then
   * parses the whole text, which also reports any syntax error where the whole puts it.
   */
  programWith(fresh: string): ParsedProgram | null {
    this.parsePending();
    if (!this.kept) return null;
    const piece = parsePiece(fresh, this.length);
    if (piece === null) return null;
    const end = this.length + fresh.length;
    const program = {
      type: "Program",
      body: [...this.statements, ...piece.statements],
      sourceType: "module",
      hashbang: this.length === 0 ? piece.hashbang : this.hashbang,
      start: 0,
      end,
      range: [0, end],
    };
    return { program: program as unknown as ParsedProgram["program"], comments: [...this.comments, ...piece.comments], errors: [] };
  }

  /** Records a successful snippet: from now on the program holds it, followed by "\n;\n". */
  append(snippet: string): void {
    if (!this.kept) return;
    this.pending.push(snippet);
    if (this.parseScheduled) return;
    this.parseScheduled = true;
    setImmediate(() => this.parsePending());
  }

  private parsePending(): void {
    this.parseScheduled = false;
    for (const snippet of this.pending.splice(0)) this.keep(snippet);
  }

  private keep(snippet: string): void {
    if (!this.kept) return;
    const chunk = `${snippet}${CONTEXT}`;
    let piece: Piece | null = null;
    try {
      const fits = this.length + chunk.length <= KEPT_CHARS && keptInAll + chunk.length <= KEPT_CHARS_IN_ALL;
      if (fits) piece = parsePiece(chunk, this.length);
    } catch {
      piece = null; // Whatever went wrong, the whole text is parsed instead from now on.
    }
    if (piece === null) {
      this.release();
      return;
    }
    if (this.length === 0) this.hashbang = piece.hashbang;
    for (const statement of piece.statements) this.statements.push(statement);
    for (const comment of piece.comments) this.comments.push(comment);
    this.length += chunk.length;
    keptInAll += chunk.length;
  }

  /** Lets go of what is kept (the session has ended, or is past the limits): from now on the caller parses the whole. */
  release(): void {
    if (this.kept) keptInAll -= this.length;
    this.kept = false;
    this.pending = [];
    this.statements = [];
    this.comments = [];
  }
}
