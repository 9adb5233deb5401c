// Tool arguments are checked at the edge: a tools/call naming an unknown tool, or with
// arguments that do not match the tool's input schema, is answered with JSON-RPC
// InvalidParams (-32602) naming what is wrong, before the SDK sees it. (The SDK 1.32 would
// answer both with an isError tool result, as the 2025-11-25 spec prefers; the issue asks for
// InvalidParams, which keeps "your call was malformed" apart from "your script failed".)
// A logging/setLevel with a level that is none of MCP's is answered the same way, and so is a
// tools/list whose cursor is no string.

import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, InitializeRequestSchema, isJSONRPCRequest, type JSONRPCMessage, ListToolsRequestSchema, LoggingLevelSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { printable } from "./printable.js";

const callParams = z.object({ name: z.string(), arguments: z.record(z.string(), z.unknown()).optional() }).loose();

/**
 * Each tool's arguments as a strict object, built once per shape: zod compiles an object
 * schema on its first parse, and building it for every call cost each call about half a
 * millisecond.
 */
const strictSchemas = new WeakMap<z.ZodRawShape, z.ZodObject>();

function strictSchemaOf(shape: z.ZodRawShape): z.ZodObject {
  let schema = strictSchemas.get(shape);
  if (schema === undefined) {
    schema = z.strictObject(shape);
    strictSchemas.set(shape, schema);
  }
  return schema;
}

/** The most characters of a name from the client (a tool, a session id, an argument) that an error quotes. */
const QUOTED_NAME_CHARS = 64;
/** The most unknown arguments an error names one by one. */
const LISTED_UNKNOWN_ARGUMENTS = 10;

/**
 * `text` quoted for an error, its first QUOTED_NAME_CHARS characters at most: a message may hold
 * 10 MiB, and an error that echoed a name whole gave the client (and the model reading it) as
 * much back. Quoted as JSON, with what JSON leaves as it is but a terminal acts on or shows
 * otherwise (the C1 controls, CSI among them; bidi overrides) as escapes too (printable): a client
 * may show the error on a terminal, and a session id is the model's choice.
 */
export function quotedName(text: string): string {
  if (text.length <= QUOTED_NAME_CHARS) return printable(JSON.stringify(text));
  return `${printable(JSON.stringify(text.slice(0, QUOTED_NAME_CHARS)))}… (${text.length.toLocaleString("en-US")} characters)`;
}

/** Why the arguments of a tools/call are wrong, or null when they are fine. */
export function argumentProblem(tools: ReadonlyMap<string, z.ZodRawShape>, params: unknown): string | null {
  const call = callParams.safeParse(params);
  if (!call.success) return `tools/call needs params {name, arguments}: ${z.prettifyError(call.error).replace(/\n/g, "; ")}`;
  const shape = tools.get(call.data.name);
  if (!shape) return `unknown tool ${quotedName(call.data.name)}; this server's tools are ${[...tools.keys()].join(", ")}`;
  // The arguments as sent, not call.data's copy: zod's record builds that copy by assignment, and
  // assigning "__proto__" set its prototype instead of making a key, so an argument named
  // "__proto__" went unseen past the check for unknown ones.
  const sent = (params as { arguments?: Record<string, unknown> }).arguments;
  const checked = strictSchemaOf(shape).safeParse(sent ?? {});
  if (checked.success) return null;
  const problems = checked.error.issues.map((issue) => {
    if (issue.code === "unrecognized_keys") {
      const listed = issue.keys.slice(0, LISTED_UNKNOWN_ARGUMENTS).map(quotedName).join(", ");
      const more = issue.keys.length - LISTED_UNKNOWN_ARGUMENTS;
      return `unknown argument${issue.keys.length > 1 ? "s" : ""} ${listed}${more > 0 ? ` and ${more.toLocaleString("en-US")} more` : ""}`;
    }
    const where = issue.path.length > 0 ? `argument "${issue.path.join(".")}"` : "arguments";
    if (issue.code === "invalid_type" && issue.path.length === 1 && !Object.hasOwn(sent ?? {}, String(issue.path[0]))) {
      return `${where} is missing (a ${issue.expected})`;
    }
    return `${where}: ${issue.message}`;
  });
  const expected = Object.keys(shape).length === 0 ? "it takes no arguments" : `it takes ${Object.keys(shape).map((k) => `"${k}"`).join(", ")}`;
  return `${call.data.name}: ${problems.join("; ")} (${expected})`;
}

/**
 * Why a logging/setLevel request is wrong, or null. The SDK answered an unknown level with
 * InternalError (-32603) and its validator's issues as raw JSON, as if the server had failed.
 */
export function logLevelProblem(params: unknown): string | null {
  const level = (params as { level?: unknown } | null | undefined)?.level;
  if (LoggingLevelSchema.safeParse(level).success) return null;
  const given = typeof level === "string" ? quotedName(level) : level === undefined ? "missing" : `a ${level === null ? "null" : typeof level}`;
  return `logging/setLevel: the level is ${given}; it takes one of ${LoggingLevelSchema.options.join(", ")}`;
}

/** What is wrong with a request's params as the SDK's schema found it, on one line: each member by its path, a member left out as missing. */
function paramsIssues(error: z.ZodError): string {
  const problems = error.issues.map((issue) => {
    const where = issue.path.length > 0 ? `"${issue.path.join(".")}"` : "params";
    return issue.code === "invalid_type" && issue.path.length > 0 && issue.message.endsWith("received undefined") ? `${where} is missing` : `${where}: ${issue.message}`;
  });
  return problems.join("; ");
}

/**
 * Why an initialize request's params are not MCP's, or null. The SDK answered them with
 * InternalError (-32603), as if the server had failed, its validator's issues a multi-line JSON
 * dump for a message.
 */
export function initializeProblem(params: unknown): string | null {
  const checked = InitializeRequestSchema.shape.params.safeParse(params);
  if (checked.success) return null;
  return (
    `initialize: ${paramsIssues(checked.error)}; nothing was set up. It takes {"protocolVersion": the MCP version the client speaks, such as "2025-06-18", ` +
    `"capabilities": an object (elicitation: {} to be asked for approvals), "clientInfo": {"name": a string, "version": a string}}`
  );
}

/**
 * Why a tools/list request's params are not MCP's (a cursor that is no string), or null. The SDK
 * answered them with InternalError (-32603), as if the server had failed, its validator's issues a
 * multi-line JSON dump for a message.
 */
export function listToolsProblem(params: unknown): string | null {
  const checked = ListToolsRequestSchema.shape.params.safeParse(params);
  if (checked.success) return null;
  // The server lists every tool on one page, so it never gives a cursor to send back.
  return `tools/list: ${paramsIssues(checked.error)}; nothing was listed. Send no params, or a cursor string a previous tools/list gave (this server lists all its tools at once)`;
}

/**
 * What a tools/call may hold besides its arguments (its id, `_meta` with its progress token, any
 * other member of its params), as JSON. A call is held, all of it, until it is answered, and only
 * its code counts towards what the server holds of calls at once (InFlightBound): 30 calls waiting
 * for their turn, each with an 8 MiB progress token, ended a tacit serve of a 200 MB heap out of
 * memory, and 256 of 10 MiB would do it at the default heap. 256 calls of this much hold 16 MiB.
 */
export const CALL_ENVELOPE_LIMIT_CHARS = 64 * 1024;

/** Why a tools/call's id and params besides its arguments are too long to hold, or null. */
export function envelopeProblem(id: unknown, params: unknown): string | null {
  const { arguments: _arguments, ...rest } = (params ?? {}) as Record<string, unknown>;
  let chars: number;
  try {
    chars = JSON.stringify([id, rest]).length;
  } catch (error) {
    // JSON.stringify recurses: a _meta of 100,000 nested arrays (200 KB) overflowed the stack here,
    // and the call went unanswered, its id held as under way for good (see mcp-request-ids.ts).
    if (!(error instanceof RangeError)) throw error;
    return (
      `tools/call: its _meta or another member of its params besides "arguments" is nested more deeply than tacit serve can measure ` +
      "(JSON.stringify ran out of stack); nothing ran. Send a flat _meta (a short progress token), and put data in the code (or in a file the script reads)"
    );
  }
  if (chars <= CALL_ENVELOPE_LIMIT_CHARS) return null;
  return (
    `tools/call: its id, _meta (the progress token) and the members of its params besides "arguments" take ${chars.toLocaleString("en-US")} ` +
    `characters as JSON, more than the ${CALL_ENVELOPE_LIMIT_CHARS.toLocaleString("en-US")} tacit serve holds for a call until it is answered; ` +
    "nothing ran. Send a short id and progress token, and put data in the code (or in a file the script reads)"
  );
}

/** Answers malformed tool calls, initialize, tools/list and logging/setLevel requests on `transport` with InvalidParams; everything else goes on to the server. */
export function refuseMalformedRequests(transport: Transport, tools: ReadonlyMap<string, z.ZodRawShape>): void {
  const deliver = transport.onmessage;
  if (!deliver) throw new Error("tacit: connect the server to the transport before checking its requests");
  /** The requests whose params are checked here, each with its check. */
  const checks = {
    "tools/call": (params: unknown) => argumentProblem(tools, params),
    initialize: initializeProblem,
    "tools/list": listToolsProblem,
    "logging/setLevel": logLevelProblem,
  };
  transport.onmessage = (message: JSONRPCMessage, extra) => {
    if (isJSONRPCRequest(message) && Object.hasOwn(checks, message.method)) {
      const problem = checks[message.method as keyof typeof checks](message.params);
      if (problem !== null) {
        void transport.send({ jsonrpc: "2.0", id: message.id, error: { code: ErrorCode.InvalidParams, message: problem } }).catch(() => undefined);
        return;
      }
      const tooLong = message.method === "tools/call" ? envelopeProblem(message.id, message.params) : null;
      if (tooLong !== null) {
        void transport.send({ jsonrpc: "2.0", id: message.id, error: { code: ErrorCode.InvalidRequest, message: tooLong } }).catch(() => undefined);
        return;
      }
    }
    deliver(message, extra);
  };
}
