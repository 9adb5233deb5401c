// The host's view of what the sandbox sends: every line from its stdout is parsed and
// validated here before anything acts on it. The schemas are tied to the protocol's types
// in both directions, so the two cannot drift apart.

import { z } from "zod";
import { ACTION_LIMITS, type Action, MAX_PRINT_PARTS, MAX_SANDBOX_FRAME_CHARS, MAX_VALUE_DEPTH, type PureReply, type SandboxFrame } from "../library/protocol.js";
import { onFirstUse } from "./on-first-use.js";
import { isUtf8 } from "node:buffer";

const NEWLINE = 0x0a;

/** The limits are the protocol's (ACTION_LIMITS), which the library keeps to before it sends. */
const L = ACTION_LIMITS;

const scope = () => z.string().max(L.scopeChars);
const filePath = () => z.string().max(L.pathChars);
const handle = () => z.string().max(L.handleChars);

/**
 * A record of at most `max` entries, counted before any entry is checked: zod checks a
 * record's entries one by one on the host's main thread, and a tenth security review sent,
 * from a raw channel, a request whose headers had 300,000 keys (about 2.5 s of the host's
 * main thread a frame, every session of a tacit serve waiting). No real request comes near.
 */
function boundedRecord<V extends z.ZodType>(max: number, what: string, key: z.ZodString, value: V) {
  const fits = (candidate: unknown): boolean => typeof candidate === "object" && candidate !== null && !Array.isArray(candidate) && Object.keys(candidate).length <= max;
  return z.custom<Record<string, unknown>>(fits, { message: `more than ${max} ${what}` }).pipe(z.record(key, value));
}

function httpFields() {
  return {
    scope: scope(),
    method: z.string().max(L.methodChars),
    url: z.string().max(L.urlChars),
    headers: boundedRecord(L.headers, "headers", z.string().max(L.headerNameChars), z.string().max(L.headerValueChars)),
    secretHeaders: boundedRecord(L.headers, "secret headers", z.string().max(L.headerNameChars), handle()),
    body: z.string().nullable(),
    classifiedBody: handle().nullable(),
  };
}

/**
 * One schema per action kind, each built the first time a request of that kind arrives:
 * building all of them took a run several milliseconds just as its first request came in.
 */
const ACTION_SCHEMAS = {
  // An array's length is checked before its items: parts are counted first, as records are.
  Print: () => z.object({ kind: z.literal("Print"), parts: z.array(z.union([z.string(), z.object({ classified: handle() }).strict()])).max(MAX_PRINT_PARTS) }).strict(),
  Classify: () => z.object({ kind: z.literal("Classify"), value: z.unknown() }).strict(),
  ClassifiedMap: () =>
    z
      .object({
        kind: z.literal("ClassifiedMap"),
        handle: handle(),
        source: z.string().max(L.mapSourceChars),
        captures: boundedRecord(L.captures, "captured names", z.string(), z.union([z.object({ plain: z.unknown() }).strict(), z.object({ classified: handle() }).strict(), z.object({ undefined: z.literal(true) }).strict()])),
        flat: z.boolean(),
      })
      .strict(),
  FsReadClassified: () => z.object({ kind: z.literal("FsReadClassified"), scope: scope(), path: filePath() }).strict(),
  FsWriteClassified: () => z.object({ kind: z.literal("FsWriteClassified"), scope: scope(), path: filePath(), handle: handle() }).strict(),
  ReadInput: () => z.object({ kind: z.literal("ReadInput") }).strict(),
  FsOpenScope: () => z.object({ kind: z.literal("FsOpenScope"), root: filePath() }).strict(),
  CloseScope: () => z.object({ kind: z.literal("CloseScope"), scope: scope() }).strict(),
  FsStat: () => z.object({ kind: z.literal("FsStat"), scope: scope(), path: filePath() }).strict(),
  FsSize: () => z.object({ kind: z.literal("FsSize"), scope: scope(), path: filePath() }).strict(),
  FsRead: () => z.object({ kind: z.literal("FsRead"), scope: scope(), path: filePath(), as: z.enum(["text", "bytes"]) }).strict(),
  FsReadChunk: () => z.object({ kind: z.literal("FsReadChunk"), scope: scope(), path: filePath(), offset: z.number().int().nonnegative() }).strict(),
  FsWrite: () => z.object({ kind: z.literal("FsWrite"), scope: scope(), path: filePath(), content: z.string(), append: z.boolean() }).strict(),
  FsDelete: () => z.object({ kind: z.literal("FsDelete"), scope: scope(), path: filePath() }).strict(),
  FsMkdir: () => z.object({ kind: z.literal("FsMkdir"), scope: scope(), path: filePath() }).strict(),
  FsList: () => z.object({ kind: z.literal("FsList"), scope: scope(), path: filePath(), recursive: z.boolean() }).strict(),
  FsFind: () => z.object({ kind: z.literal("FsFind"), scope: scope(), path: filePath(), glob: z.string().max(L.globChars) }).strict(),
  FsGrep: () => z.object({ kind: z.literal("FsGrep"), scope: scope(), path: filePath(), pattern: z.string().max(L.patternChars) }).strict(),
  Chat: () => z.object({ kind: z.literal("Chat"), message: z.string() }).strict(),
  ChatClassified: () => z.object({ kind: z.literal("ChatClassified"), handle: handle() }).strict(),
  NetOpenScope: () => z.object({ kind: z.literal("NetOpenScope"), hosts: z.array(z.string().max(L.hostChars)).max(L.hosts) }).strict(),
  // A request whose answer the script sees carries no classified body: its answer is derived from
  // the plaintext. A script that replaced JSON.stringify renamed httpPostClassified's request to
  // this kind and read the answer (redacted only of the forms the body was sent in) with JSON.parse.
  HttpRequest: () => z.object({ kind: z.literal("HttpRequest"), ...httpFields(), classifiedBody: z.null() }).strict(),
  HttpRequestClassified: () => z.object({ kind: z.literal("HttpRequestClassified"), ...httpFields() }).strict(),
  ExecOpenScope: () => z.object({ kind: z.literal("ExecOpenScope"), commands: z.array(z.string().max(L.commandChars)).max(L.commands) }).strict(),
  Exec: () =>
    z
      .object({
        kind: z.literal("Exec"),
        scope: scope(),
        command: z.string().max(L.commandChars),
        args: z.array(z.string()).max(L.args),
        cwd: filePath().nullable(),
        timeoutMs: z.number().int().positive().nullable(),
        input: z.string().nullable(),
      })
      .strict(),
  FsGrepRecursive: () =>
    z.object({ kind: z.literal("FsGrepRecursive"), scope: scope(), path: filePath(), pattern: z.string().max(L.patternChars), glob: z.string().max(L.globChars).nullable() }).strict(),
};

type ActionKind = keyof typeof ACTION_SCHEMAS;
type ParsedAction = { [K in ActionKind]: z.infer<ReturnType<(typeof ACTION_SCHEMAS)[K]>> }[ActionKind];
const builtActionSchemas = new Map<ActionKind, ReturnType<(typeof ACTION_SCHEMAS)[ActionKind]>>();

function actionSchema(kind: ActionKind): ReturnType<(typeof ACTION_SCHEMAS)[ActionKind]> {
  let schema = builtActionSchemas.get(kind);
  if (schema === undefined) builtActionSchemas.set(kind, (schema = ACTION_SCHEMAS[kind]()));
  return schema;
}

/**
 * A whole request frame whose action is of `kind`, built the first time one arrives: the
 * common frame is then checked in one parse, where the envelope and then its action took two
 * (each a discriminated union's or an object's worth of zod calls, which cost most while the
 * JIT is still cold, over a run's first thousands of requests).
 */
const builtRequestSchemas = new Map<ActionKind, z.ZodType<unknown>>();

function requestSchema(kind: ActionKind): z.ZodType<unknown> {
  let schema = builtRequestSchemas.get(kind);
  if (schema === undefined) builtRequestSchemas.set(kind, (schema = requestFrameSchema(actionSchema(kind))));
  return schema;
}

/** How a flat action's field is checked: a string of at most so many characters, one of a few strings, or a boolean. */
type FlatField = { readonly maxChars: number } | { readonly oneOf: readonly string[] } | "boolean";

const SCOPE_FIELD: FlatField = { maxChars: L.scopeChars };
const PATH_FIELD: FlatField = { maxChars: L.pathChars };

/**
 * The actions a loop over files sends most, whose fields are all strings and booleans: each with
 * its fields in the order, and checked as, its schema in ACTION_SCHEMAS has them. A request of one
 * of these is checked by hand (flatRequestOf), not by zod: zod's parse of a read's frame was, over
 * a run's first thousands of reads (before V8 has compiled it), about a third of the host's
 * work per read. test/runner/frames.test.ts holds each to its schema on hostile variants.
 */
const FLAT_ACTIONS: { readonly [K in ActionKind]?: FlatFieldsOf<K> } = {
  FsRead: { scope: SCOPE_FIELD, path: PATH_FIELD, as: { oneOf: ["text", "bytes"] } },
  FsStat: { scope: SCOPE_FIELD, path: PATH_FIELD },
  FsSize: { scope: SCOPE_FIELD, path: PATH_FIELD },
  FsWrite: { scope: SCOPE_FIELD, path: PATH_FIELD, content: { maxChars: Infinity }, append: "boolean" },
  FsDelete: { scope: SCOPE_FIELD, path: PATH_FIELD },
  FsMkdir: { scope: SCOPE_FIELD, path: PATH_FIELD },
  FsList: { scope: SCOPE_FIELD, path: PATH_FIELD, recursive: "boolean" },
  CloseScope: { scope: SCOPE_FIELD },
};

/** How each field of an action of kind K but its kind is checked: every field the protocol gives it, and no other (a compile error otherwise). */
type FlatFieldsOf<K extends ActionKind> = Readonly<Record<Exclude<keyof Extract<Action, { kind: K }>, "kind">, FlatField>>;

/** The kinds flatRequestOf checks by hand (for the test that holds it to the schemas). */
export const FLAT_ACTION_KINDS: readonly string[] = Object.keys(FLAT_ACTIONS);

function fitsFlatField(value: unknown, field: FlatField): boolean {
  if (field === "boolean") return typeof value === "boolean";
  if (typeof value !== "string") return false;
  return "maxChars" in field ? value.length <= field.maxChars : field.oneOf.includes(value);
}

/** An object JSON.parse made (not an array) with exactly `count` own keys. */
function isObjectWithKeys(value: unknown, count: number): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === count;
}

/**
 * A request whose action is one of FLAT_ACTIONS, if `json` is exactly what its kind's frame schema
 * accepts (every key present and own, no other key, each value of its type and length), built as
 * that schema returns it (a new object, keys in the schema's order); null for anything else,
 * which the schemas then check (and name what is wrong). Flat, it nests no deeper than two levels.
 */
export function flatRequestOf(json: unknown): SandboxFrame | null {
  if (!isObjectWithKeys(json, 3) || !Object.hasOwn(json, "type") || !Object.hasOwn(json, "id") || !Object.hasOwn(json, "action")) return null;
  const { type, id, action } = json;
  if (type !== "request" || typeof id !== "number" || !Number.isSafeInteger(id) || id <= 0) return null;
  if (typeof action !== "object" || action === null || !Object.hasOwn(action, "kind")) return null;
  const kind = (action as { kind: unknown }).kind;
  if (typeof kind !== "string" || !Object.hasOwn(FLAT_ACTIONS, kind)) return null;
  const fields: Readonly<Record<string, FlatField>> = FLAT_ACTIONS[kind as ActionKind]!;
  const names = Object.keys(fields);
  if (!isObjectWithKeys(action, names.length + 1)) return null;
  const checked: Record<string, unknown> = { kind };
  for (const name of names) {
    if (!Object.hasOwn(action, name) || !fitsFlatField(action[name], fields[name]!)) return null;
    checked[name] = action[name];
  }
  return { type: "request", id, action: checked as Action };
}

/** A request frame around an action checked by `action`. */
function requestFrameSchema<A extends z.ZodType>(action: A) {
  return z.object({ type: z.literal("request"), id: z.number().int().positive(), action }).strict();
}

/** A post: an action the stub does not wait on (PostedAction: printing), checked whole. */
const postSchema = onFirstUse(() => z.object({ type: z.literal("post"), action: ACTION_SCHEMAS.Print() }).strict());

/** A frame's outer shape; a request's action is checked against the schema of its kind. */
const envelopeSchema = onFirstUse(() =>
  z.discriminatedUnion("type", [
    // A request of a known kind never gets here: its own frame schema checks it whole (see
    // requestSchema). What does is refused below for the kind it lacks.
    requestFrameSchema(z.unknown()),
    postSchema(),
    z.object({ type: z.literal("done") }).strict(),
    z
      .object({
        type: z.literal("failed"),
        error: z.object({ name: z.string(), message: z.string(), stack: z.string() }).strict(),
      })
      .strict(),
  ]),
);

const pureReplySchema = onFirstUse(() =>
  z.union([
    z.object({ id: z.number().int(), ok: z.literal(true), value: z.unknown() }).strict(),
    z.object({ id: z.number().int(), ok: z.literal(false), error: z.string() }).strict(),
  ]),
);

/**
 * Builds what the first frame needs (the envelope, posts of printing among it) if not yet built.
 * Called once a program is on its way, so the building overlaps the sandbox's start on it.
 */
export function prepareFrameParsing(): void {
  envelopeSchema();
}

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const actionSchemasMatchProtocol: Same<ParsedAction, Action> = true;
void actionSchemasMatchProtocol;

export class ProtocolError extends Error {
  override name = "ProtocolError";
}

/** Whether a parsed JSON value nests deeper than MAX_VALUE_DEPTH (iterative: any depth is safe to ask about). */
function nestsTooDeeply(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  // Only objects and arrays are stacked: a frame's many strings and numbers cost no entry.
  const stack: Array<[object, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (depth >= MAX_VALUE_DEPTH) return true;
    for (const child of Object.values(current)) {
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * A read's request as the stub writes it: JSON.stringify of the frame, its keys in the protocol's
 * order, its strings holding no escape (nor, as JSON requires, a control character) and its id a
 * plain integer. Only such a line is matched (linear: no part can match another's text).
 */
const PLAIN_READ_REQUEST = /^\{"type":"request","id":([1-9][0-9]{0,15}),"action":\{"kind":"FsRead","scope":"([^"\\\u0000-\u001f]*)","path":"([^"\\\u0000-\u001f]*)","as":"(text|bytes)"\}\}$/;
const PLAIN_READ_START = '{"type":"request","id":';

/**
 * What JSON.parse and flatRequestOf make of `line`, where it is a read's request written as the
 * stub writes one (PLAIN_READ_REQUEST), taken from the text itself: with no escape in them, its
 * strings are what they say, and the same limits are applied. Null for any other line (another
 * layout, an escape, a limit passed), which is parsed and checked as before. JSON.parse built the
 * frame key by key, each key looked up in V8's string table: about 8 µs of a small read's host CPU.
 * test/runner/read-frames.test.ts holds it to JSON.parse and flatRequestOf on hostile variants.
 */
export function plainReadRequestOf(line: string): SandboxFrame | null {
  if (!line.startsWith(PLAIN_READ_START)) return null;
  const match = PLAIN_READ_REQUEST.exec(line);
  if (match === null) return null;
  const id = Number(match[1]);
  const scope = match[2]!;
  const path = match[3]!;
  if (!Number.isSafeInteger(id) || scope.length > L.scopeChars || path.length > L.pathChars) return null;
  return { type: "request", id, action: { kind: "FsRead", scope, path, as: match[4] === "bytes" ? "bytes" : "text" } };
}

export function parseSandboxFrame(line: string): SandboxFrame {
  const read = plainReadRequestOf(line);
  if (read !== null) return read;
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    throw new ProtocolError(`the sandbox wrote something that is not a protocol frame: ${JSON.stringify(line.slice(0, 80))}`);
  }
  return flatRequestOf(json) ?? checkedBySchemas(json, line);
}

/** `json` (parsed from `line`) checked by the zod schemas, whatever it is: the edge every frame goes through but flat requests (flatRequestOf). */
export function checkedBySchemas(json: unknown, line: string): SandboxFrame {
  if (nestsTooDeeply(json)) throw new ProtocolError(`the sandbox sent a frame nested deeper than ${MAX_VALUE_DEPTH} levels`);
  const malformed = (error: z.ZodError): ProtocolError =>
    new ProtocolError(`the sandbox sent a malformed frame (${error.issues[0]?.message ?? "invalid"}): ${JSON.stringify(line.slice(0, 80))}`);
  // A request naming a known kind is checked whole, envelope and action, by that kind's frame
  // schema; anything else goes the long way, which also names what is wrong with it.
  const requestKind = knownRequestKindOf(json);
  if (requestKind !== null) {
    const request = requestSchema(requestKind).safeParse(json);
    if (!request.success) throw malformed(request.error);
    return request.data as SandboxFrame;
  }
  if (typeof json === "object" && json !== null && (json as { type?: unknown }).type === "post") {
    const post = postSchema().safeParse(json);
    if (!post.success) throw malformed(post.error);
    return post.data as SandboxFrame;
  }
  const frame = envelopeSchema().safeParse(json);
  if (!frame.success) throw malformed(frame.error);
  if (frame.data.type !== "request") return frame.data;
  // A request of a known kind was checked whole above: this one names no kind, or one the protocol lacks.
  const kind = kindOf(frame.data.action);
  if (kind === null) throw new ProtocolError(`the sandbox sent a malformed frame (an action without a kind): ${JSON.stringify(line.slice(0, 80))}`);
  throw new ProtocolError(`the sandbox sent a malformed frame (unknown action kind ${JSON.stringify(kind.slice(0, 40))}): ${JSON.stringify(line.slice(0, 80))}`);
}

/** The action kind of what claims to be a request, if it is one the protocol has; else null. */
function knownRequestKindOf(json: unknown): ActionKind | null {
  if (typeof json !== "object" || json === null || !Object.hasOwn(json, "type") || !Object.hasOwn(json, "action")) return null;
  const { type, action } = json as { type: unknown; action: unknown };
  if (type !== "request") return null;
  const kind = kindOf(action);
  return kind !== null && Object.hasOwn(ACTION_SCHEMAS, kind) ? (kind as ActionKind) : null;
}

/** The `kind` an action names, to pick the schema that then checks all of it; null if it names none. */
function kindOf(action: unknown): string | null {
  if (typeof action !== "object" || action === null || !Object.hasOwn(action, "kind")) return null;
  const { kind } = action as { kind: unknown };
  return typeof kind === "string" ? kind : null;
}

/** A reply from the pure evaluator (agent code runs there: it is validated like any frame). */
export function parsePureReply(line: string): PureReply {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    throw new ProtocolError("the pure evaluator wrote something that is not a reply");
  }
  // Killing the evaluator for it fails the job out of sight, like any other failing map.
  if (nestsTooDeeply(json)) throw new ProtocolError(`the pure evaluator sent a value nested deeper than ${MAX_VALUE_DEPTH} levels`);
  const parsed = pureReplySchema().safeParse(json);
  if (!parsed.success) throw new ProtocolError("the pure evaluator sent a malformed reply");
  return parsed.data as PureReply;
}

/** Splits a byte stream into lines, refusing any line longer than the protocol allows. */
export class FrameSplitter {
  private pending = "";
  private readonly decoder = new TextDecoder("utf-8", { fatal: true });

  /** `limitChars`: the longest line accepted (the pure evaluator's replies may be larger). */
  constructor(private readonly limitChars: number = MAX_SANDBOX_FRAME_CHARS) {}

  /** Characters of a line not ended yet, held until its end arrives. */
  get holdingChars(): number {
    return this.pending.length;
  }

  /**
   * Whether the decoder holds nothing of the chunks before (they ended at a line break, a whole
   * character) and has begun its stream (so it would strip no byte order mark): a chunk is then
   * decoded by itself alike.
   */
  private decoderAtLineStart = false;

  push(chunk: Uint8Array): string[] {
    let text: string;
    const endsLine = chunk.length > 0 && chunk[chunk.length - 1] === NEWLINE;
    // The usual chunk (a frame the stub wrote whole): checked and decoded at once, what the
    // decoder's fatal decoding (ICU's, through a streaming converter) did at some 3 µs of a read.
    if (this.decoderAtLineStart && endsLine && isUtf8(chunk)) text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length).toString("utf8");
    else {
      try {
        text = this.decoder.decode(chunk, { stream: true });
      } catch {
        throw new ProtocolError("the sandbox wrote bytes that are not UTF-8 to the protocol channel");
      }
    }
    if (chunk.length > 0) this.decoderAtLineStart = endsLine;
    // One whole line and nothing held before it: no split (and no array of its parts) to find it.
    if (endsLine && this.pending === "" && text.indexOf("\n") === text.length - 1) {
      const line = text.slice(0, -1);
      if (line.length > this.limitChars) throw new ProtocolError(`the sandbox wrote a frame longer than ${this.limitChars} characters`);
      return [line];
    }
    // Split only where the new text has line breaks; a long frame arriving in many chunks is
    // not rescanned from its start each time.
    if (!text.includes("\n")) {
      this.pending += text;
      if (this.pending.length > this.limitChars) {
        throw new ProtocolError(`the sandbox wrote a frame longer than ${this.limitChars} characters`);
      }
      return [];
    }
    const lines = (this.pending + text).split("\n");
    this.pending = lines.pop() ?? "";
    if (this.pending.length > this.limitChars || lines.some((line) => line.length > this.limitChars)) {
      throw new ProtocolError(`the sandbox wrote a frame longer than ${this.limitChars} characters`);
    }
    return lines;
  }
}
