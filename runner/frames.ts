// The host's view of what the sandbox sends: every line from its stdout is parsed and
// validated here before anything acts on it. The schemas are tied to the protocol's types
// in both directions, so the two cannot drift apart.

import { z } from "zod";
import { type Action, MAX_SANDBOX_FRAME_CHARS, type PureReply, type SandboxFrame } from "../library/protocol.js";

/**
 * The schemas, built on first use: building them takes milliseconds that a run would otherwise
 * spend before its sandbox gets the program (see prepareFrameParsing).
 */
function buildSchemas() {
  const scope = z.string().max(256);
  const filePath = z.string().max(4096);
  const handle = z.string().max(64);

  const httpFields = {
    scope,
    method: z.string().max(64),
    url: z.string().max(4 * 1024 * 1024),
    headers: z.record(z.string().max(1024), z.string().max(65536)),
    secretHeaders: z.record(z.string().max(1024), handle),
    body: z.string().nullable(),
    classifiedBody: handle.nullable(),
  };

  const ActionSchema = z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("Print"), parts: z.array(z.union([z.string(), z.object({ classified: handle }).strict()])) }).strict(),
    z.object({ kind: z.literal("Classify"), value: z.unknown() }).strict(),
    z
      .object({
        kind: z.literal("ClassifiedMap"),
        handle,
        source: z.string().max(1024 * 1024),
        captures: z.record(z.string(), z.union([z.object({ plain: z.unknown() }).strict(), z.object({ classified: handle }).strict()])),
        flat: z.boolean(),
      })
      .strict(),
    z.object({ kind: z.literal("FsReadClassified"), scope, path: filePath }).strict(),
    z.object({ kind: z.literal("FsWriteClassified"), scope, path: filePath, handle }).strict(),
    z.object({ kind: z.literal("ReadInput") }).strict(),
    z.object({ kind: z.literal("FsOpenScope"), root: filePath }).strict(),
    z.object({ kind: z.literal("CloseScope"), scope }).strict(),
    z.object({ kind: z.literal("FsStat"), scope, path: filePath }).strict(),
    z.object({ kind: z.literal("FsSize"), scope, path: filePath }).strict(),
    z.object({ kind: z.literal("FsRead"), scope, path: filePath, as: z.enum(["text", "bytes"]) }).strict(),
    z.object({ kind: z.literal("FsReadChunk"), scope, path: filePath, offset: z.number().int().nonnegative() }).strict(),
    z.object({ kind: z.literal("FsWrite"), scope, path: filePath, content: z.string(), append: z.boolean() }).strict(),
    z.object({ kind: z.literal("FsDelete"), scope, path: filePath }).strict(),
    z.object({ kind: z.literal("FsMkdir"), scope, path: filePath }).strict(),
    z.object({ kind: z.literal("FsList"), scope, path: filePath, recursive: z.boolean() }).strict(),
    z.object({ kind: z.literal("FsFind"), scope, path: filePath, glob: z.string().max(4096) }).strict(),
    z.object({ kind: z.literal("FsGrep"), scope, path: filePath, pattern: z.string().max(65536) }).strict(),
    z.object({ kind: z.literal("Chat"), message: z.string() }).strict(),
    z.object({ kind: z.literal("ChatClassified"), handle }).strict(),
    z.object({ kind: z.literal("NetOpenScope"), hosts: z.array(z.string().max(1024)).max(1000) }).strict(),
    z.object({ kind: z.literal("HttpRequest"), ...httpFields }).strict(),
    z.object({ kind: z.literal("HttpRequestClassified"), ...httpFields }).strict(),
    z.object({ kind: z.literal("ExecOpenScope"), commands: z.array(z.string().max(4096)).max(1000) }).strict(),
    z
      .object({
        kind: z.literal("Exec"),
        scope,
        command: z.string().max(4096),
        args: z.array(z.string()).max(100_000),
        cwd: filePath.nullable(),
        timeoutMs: z.number().int().positive().nullable(),
        input: z.string().nullable(),
      })
      .strict(),
    z
      .object({ kind: z.literal("FsGrepRecursive"), scope, path: filePath, pattern: z.string().max(65536), glob: z.string().max(4096).nullable() })
      .strict(),
  ]);

  const SandboxFrameSchema = z.discriminatedUnion("type", [
    z.object({ type: z.literal("request"), id: z.number().int().positive(), action: ActionSchema }).strict(),
    z.object({ type: z.literal("done") }).strict(),
    z
      .object({
        type: z.literal("failed"),
        error: z.object({ name: z.string(), message: z.string(), stack: z.string() }).strict(),
      })
      .strict(),
  ]);

  const PureReplySchema = z.union([
    z.object({ id: z.number().int(), ok: z.literal(true), value: z.unknown() }).strict(),
    z.object({ id: z.number().int(), ok: z.literal(false), error: z.string() }).strict(),
  ]);

  return { ActionSchema, SandboxFrameSchema, PureReplySchema };
}

type Schemas = ReturnType<typeof buildSchemas>;
let schemas: Schemas | null = null;

/**
 * Builds the schemas if they are not built yet. Called once a program is on its way, so the
 * building overlaps the sandbox's start on it instead of delaying the program.
 */
export function prepareFrameParsing(): Schemas {
  return (schemas ??= buildSchemas());
}

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const actionSchemaMatchesProtocol: Same<z.infer<Schemas["ActionSchema"]>, Action> = true;
const frameSchemaMatchesProtocol: Same<z.infer<Schemas["SandboxFrameSchema"]>, SandboxFrame> = true;
void actionSchemaMatchesProtocol;
void frameSchemaMatchesProtocol;

export class ProtocolError extends Error {
  override name = "ProtocolError";
}

export function parseSandboxFrame(line: string): SandboxFrame {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    throw new ProtocolError(`the sandbox wrote something that is not a protocol frame: ${JSON.stringify(line.slice(0, 80))}`);
  }
  const parsed = prepareFrameParsing().SandboxFrameSchema.safeParse(json);
  if (!parsed.success) {
    throw new ProtocolError(`the sandbox sent a malformed frame (${parsed.error.issues[0]?.message ?? "invalid"}): ${JSON.stringify(line.slice(0, 80))}`);
  }
  return parsed.data;
}



/** A reply from the pure evaluator (agent code runs there: it is validated like any frame). */
export function parsePureReply(line: string): PureReply {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    throw new ProtocolError("the pure evaluator wrote something that is not a reply");
  }
  const parsed = prepareFrameParsing().PureReplySchema.safeParse(json);
  if (!parsed.success) throw new ProtocolError("the pure evaluator sent a malformed reply");
  return parsed.data as PureReply;
}

/** Splits a byte stream into lines, refusing any line longer than the protocol allows. */
export class FrameSplitter {
  private pending = "";
  private readonly decoder = new TextDecoder("utf-8", { fatal: true });

  /** `limitChars`: the longest line accepted (the pure evaluator's replies may be larger). */
  constructor(private readonly limitChars: number = MAX_SANDBOX_FRAME_CHARS) {}

  push(chunk: Uint8Array): string[] {
    let text: string;
    try {
      text = this.decoder.decode(chunk, { stream: true });
    } catch {
      throw new ProtocolError("the sandbox wrote bytes that are not UTF-8 to the protocol channel");
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
