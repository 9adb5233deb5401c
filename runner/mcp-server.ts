// `tacit serve`: an MCP server over stdio (the official SDK), so that any MCP client can send
// code instead of tool calls. stdout carries protocol messages only; anything for a person
// goes to stderr. Each call runs like `tacit run`, with the same checks and messages; a
// failure is a tool result with isError, never a protocol error.

import { readFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { ErrorCode, type JSONRPCMessage, type ServerNotification, type ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { RunnerConfig } from "./config.js";
import { AuditLogFailedAfterRun, auditLogFailedText, evaluate, type EvaluationResult, EXIT_CODES, noPendingClassifiedWork } from "./evaluate.js";
import { interfacePath } from "./paths.js";
import { watchSandboxesOffThread } from "./sandbox-backstop.js";
import type { SandboxProcess } from "./sandbox-process.js";
import type { TypeChecker } from "./checks.js";
import { ThreadedTypeChecker } from "./typecheck-thread.js";
import { Recorder } from "./recorder.js";
import { quotedName, refuseMalformedRequests } from "./mcp-arguments.js";
import { answerUnreadableRequests, limitedStdin, MAX_MESSAGE_BYTES, type OversizedMessage, type PastTheBound } from "./mcp-stdin.js";
import { answerToUnseen, refuseRequestIdsUnderWay } from "./mcp-request-ids.js";
import { ReplSession } from "./session.js";
import { UNREAD_ANSWERS_LIMIT_BYTES, UNREAD_MESSAGES_LIMIT, waitForUnreadAnswers } from "./unread-answers.js";
import { EvaluatorsMemory, SessionsMemory } from "./sessions-memory.js";
import { WarmSpare } from "./warm-spare.js";
import { HeapShare } from "./heap-share.js";
import type { Oversight } from "./approval/gate.js";
import { elicitationAsker } from "./approval/elicitation.js";
import { createOversight } from "./approval/oversight.js";
import { monotonicMs } from "./monotonic.js";
import { lineColumnOf, lineStarts } from "./source-position.js";
import { ConcurrencyLimit, InFlightBound, LeftWork, type Slot } from "./concurrency-limit.js";
import { CALLS_IN_FLIGHT_LIMIT, CODE_IN_FLIGHT_LIMIT_CHARS } from "./limits.js";
import { StoppedBySignal } from "./stop-reason.js";
import { isTerminalControl, printable, scriptTextOnStderr, terminalSafe } from "./printable.js";

const INSTRUCTIONS =
  "tacit runs TypeScript you write against a capability library, in a sandbox with no authority of its own: " +
  "files, commands, the network and a second model are capabilities you request in the code " +
  "(requestFileSystem, requestExecPermission, requestNetwork, chat), and the operator's policy decides each effect. " +
  "Secrets stay classified: you can transform and store them, never see them. " +
  "Call show_interface first to see the API, then execute_typescript with a complete script.";

const EXAMPLES = `
// Examples
requestFileSystem(".", (fs) => {
  for (const m of fs.grepRecursive("src", "TODO", "*.ts")) println(\`\${m.file}:\${m.lineNumber}: \${m.line}\`);
  const env = fs.readClassified(".env");                    // a handle; the plaintext stays in the host
  fs.writeClassified(".env.backup", env.map((t) => t.trim()));
});
requestExecPermission(["git"], (proc) => println(proc.execOutput("git", ["status", "--short"])));
`;

/** The session tools' arguments (the tools --no-session hides). */
const SESSION_TOOL_ARGUMENTS = {
  create_repl_session: {},
  execute_in_session: { session_id: z.string(), code: z.string() },
  delete_repl_session: { session_id: z.string() },
  list_sessions: {},
} satisfies Record<string, z.ZodRawShape>;

/** Each tool's arguments: registered as its input schema, and checked at the edge (mcp-arguments.ts). */
const TOOL_ARGUMENTS = {
  execute_typescript: { code: z.string().describe("the whole script") },
  show_interface: {},
  ...SESSION_TOOL_ARGUMENTS,
} satisfies Record<string, z.ZodRawShape>;

const PROGRESS_INTERVAL_MS = 1000;
/** A call this soon after the last answer is taken as part of a burst (see withSpare). */
const BACK_TO_BACK_MS = 50;

const resultShape = {
  stdout: z.string().describe("what the script printed (classified values show as Classified(***))"),
  error: z.string().nullable().describe("why it failed, in the script's own terms; null on success"),
  exitCode: z.number().int().describe("0 success, 1 threw, 2 tacit could not write its audit log, 3 rejected before running, 124 timed out, 125 resource limit"),
  durationMs: z.number(),
  truncated: z.boolean().describe("true if the output was cut: at the output limit (10 MiB printed, unless the server's config sets less), or to keep the answer within what an MCP client reads"),
  warnings: z.array(z.string()).describe("what tacit noticed about the answers the script got, such as entries a search could not read and left out"),
};

/**
 * What an answer's output and error may take together, JSON-escaped, in UTF-8: an answer holds
 * them twice (the text for the model and structuredContent), and the MCP SDK's stdio client
 * reads at most 10 MiB of a message: past it, it closes the connection, every session of the
 * server with it. 10 MiB of output made a 20 MiB answer; a control character escapes to six bytes.
 */
const ANSWER_TEXT_LIMIT_BYTES = 4 * 1024 * 1024;
/** What of that an error may take (its stack or message is rarely longer than a few KiB). */
const ANSWER_ERROR_LIMIT_BYTES = 1024 * 1024;
/** Room kept for the marker that says where a text was cut. */
const CUT_MARKER_ROOM_BYTES = 512;

/**
 * The bytes the UTF-16 unit at `i` of `text` takes in JSON (escaped as JSON.stringify does), in UTF-8; a pair counts at
 * its first half. A terminal control counts as its escape in the text items (see toolResult), the larger of its two copies:
 * "\u001b", which JSON escapes again to seven bytes.
 */
function jsonBytesAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (isTerminalControl(c)) return 7;
  if (c < 0x20) return c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d ? 2 : 6;
  if (c === 0x22 || c === 0x5c) return 2;
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  if (c >= 0xd800 && c <= 0xdbff) {
    const next = text.charCodeAt(i + 1);
    return next >= 0xdc00 && next <= 0xdfff ? 4 : 6;
  }
  if (c >= 0xdc00 && c <= 0xdfff) {
    const before = i > 0 ? text.charCodeAt(i - 1) : 0;
    return before >= 0xd800 && before <= 0xdbff ? 0 : 6;
  }
  return 3;
}

/** The JSON bytes of `text` in an answer (jsonBytesAt summed). */
function answerBytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) bytes += jsonBytesAt(text, i);
  return bytes;
}

/**
 * `text` cut, where it would take more than `limitBytes` in an answer: the start kept, and the
 * marker that says what was cut and why ("" when nothing was), to be put after it.
 */
function fittedToAnswer(text: string, limitBytes: number, what: "output" | "error"): { kept: string; marker: string } {
  if (answerBytes(text) <= limitBytes) return { kept: text, marker: "" };
  // The longest start that leaves room for the marker; a pair is never split (its second half
  // costs nothing, so the scan stops at its first).
  const keep = limitBytes - CUT_MARKER_ROOM_BYTES;
  let bytes = 0;
  let end = 0;
  while (end < text.length && bytes + jsonBytesAt(text, end) <= keep) bytes += jsonBytesAt(text, end++);
  const marker =
    `\n[tacit: ${what} cut here: the rest (${(text.length - end).toLocaleString("en-US")} characters) would have made the answer longer than ` +
    `an MCP client reads (10 MiB, with the ${what} in it twice, escaped as JSON)${what === "output" ? "; print less, or write large results to a file with requestFileSystem" : ""}]\n`;
  return { kept: text.slice(0, end), marker };
}

/** The first line of a result's first item: what follows is the script's, and tacit's lines are in the next item. */
const SCRIPT_OUTPUT_HEADER = "[the script's output, as printed; tacit's own lines are in the next item";

function toolResult(result: Pick<EvaluationResult, "outcome" | "stdout" | "error" | "exitCode" | "durationMs" | "truncated" | "warnings">) {
  const { exitCode, durationMs, warnings } = result;
  // Within what the client reads: the error first (it says why the call failed), the warnings
  // (a few KiB at most: see WARNINGS_LIMIT), the output in what is left.
  const cutError = result.error === null ? null : fittedToAnswer(result.error, ANSWER_ERROR_LIMIT_BYTES, "error");
  // The structured result holds the error exactly as the script made it. The text, where tacit's
  // own lines ("tacit: warning: …", the cut marker) stand beside it, shows it as tacit's stderr
  // does (scriptTextOnStderr): a script's "boom\ntacit: approval …" started a line that an agent
  // reading the text took for tacit's. A rejection is the checks' own lines (what they quote of
  // the script is escaped), shown as they are, as tacit run shows them.
  // The text items are shown to a person too, by clients that write them to a terminal: there, a script's
  // ESC and C1 controls erased and redrew lines (the report's exit line replaced by a forged one), set the
  // clipboard (OSC 52) or retitled the window. They are written as escapes, as tacit run writes them to a
  // terminal (terminalSafe); structuredContent keeps the output and the error exactly.
  const error = cutError === null ? null : cutError.kept + cutError.marker;
  // A script's error stands in tacit's report, so each of its lines is also made printable there (bidi overrides,
  // zero-width and other invisible characters as escapes): an error class named "\u202e[sm 3 ,0 tixe :ticat]" made a
  // line right under the real exit line that a bidi-aware viewer draws as "[tacit: exit 0, 3 ms]".
  const shownError =
    cutError === null ? null : (result.outcome === "rejected" ? terminalSafe(cutError.kept) : scriptTextOnStderr(cutError.kept).split("\n").map(printable).join("\n")) + cutError.marker;
  // Indenting can make the shown error longer than the exact one (twice, for an error of bare
  // line breaks): the output gets what the two leave of the budget, each held once.
  const errorBytes = error === null || shownError === null ? 0 : Math.ceil((answerBytes(error) + answerBytes(shownError)) / 2);
  // As tacit run writes them to stderr, after the output and before the error.
  const warned = warnings.map((warning) => `tacit: warning: ${terminalSafe(warning)}\n`).join("");
  const output = fittedToAnswer(result.stdout, ANSWER_TEXT_LIMIT_BYTES - errorBytes - answerBytes(warned), "output");
  const stdout = output.kept + output.marker;
  const truncated = result.truncated || output.marker !== "";
  // Two items, each saying on its first line whose it is: the script's output alone in the first,
  // tacit's own lines (the exit line, the cut marker, warnings, the error as tacit shows it) in
  // the second. In one text, a script that printed "tacit: warning: …" or "[exit 0, 3 ms]" made
  // lines an agent took for tacit's; no output can reach past its own item.
  const scriptOutput = output.kept === "" ? `${SCRIPT_OUTPUT_HEADER}: nothing printed]` : `${SCRIPT_OUTPUT_HEADER}]\n${terminalSafe(output.kept)}`;
  const report = [
    `[tacit: exit ${exitCode}, ${durationMs} ms${truncated ? ", output truncated" : ""}]`,
    output.marker.trim(),
    warned.trimEnd(),
    shownError === null ? "" : shownError.trimEnd(),
  ]
    .filter((part) => part !== "")
    .join("\n");
  return {
    content: [
      { type: "text" as const, text: scriptOutput },
      { type: "text" as const, text: report },
    ],
    structuredContent: { stdout, error, exitCode, durationMs, truncated, warnings },
    isError: exitCode !== 0,
  };
}

/**
 * A call's debug line, sent once its answer has gone out: a client that set no logging level
 * gets every message, and a notification written first would delay the answer behind it.
 */
function logAfterAnswer(log: ReturnType<typeof serverLog>, message: string): void {
  setImmediate(() => log("debug", message));
}

type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * What a call answers when tacit could not write its audit log: the result of an evaluation the log failed under
 * (AuditLogFailedAfterRun), whose error says so with none of the host's internals, or null for any other error. The
 * log's own message, with its path and what to do, is for the operator: said on stderr and in the server's log, once.
 * (It reached the client alone, as the SDK's error text, the script's output lost, and the operator was told nothing.)
 */
type AuditLogFailureAnswer = (error: unknown) => EvaluationResult | null;

/** AuditLogFailureAnswer, and the failure it saw first (the server exits 2 for it, saying it again: see serve). */
function auditLogFailureAnswer(log: ReturnType<typeof serverLog>): { answer: AuditLogFailureAnswer; failure: () => Error | null } {
  let failure: Error | null = null;
  const answer: AuditLogFailureAnswer = (error) => {
    if (!(error instanceof Error) || error.name !== "AuditLogError") return null;
    if (failure === null) log("error", `${error.message.replace(/\.$/, "")}. Every call that runs code is refused until tacit serve is restarted with an audit log it can write`);
    failure ??= error;
    return error instanceof AuditLogFailedAfterRun
      ? error.result
      : { outcome: "audit-log-failed", exitCode: EXIT_CODES["audit-log-failed"], stdout: "", error: auditLogFailedText("before it ran"), durationMs: 0, truncated: false, warnings: [] };
  };
  return { answer, failure: () => failure };
}

/** Runs `work`; a client that sent a progress token hears about it every second until it ends. */
async function withProgress<T>(extra: ToolExtra, work: () => Promise<T>): Promise<T> {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return work();
  const started = Date.now();
  const ticker = setInterval(() => {
    const progress = Date.now() - started;
    void extra
      .sendNotification({ method: "notifications/progress", params: { progressToken, progress, message: `running for ${Math.round(progress / 1000)} s` } })
      .catch(() => undefined);
  }, PROGRESS_INTERVAL_MS);
  try {
    return await work();
  } finally {
    clearInterval(ticker);
  }
}

/**
 * The calls that run code (execute_typescript, execute_in_session, create_repl_session), while
 * they are under way. When the server stops (its client gone, or its transport closed), each is
 * ended as its client's cancellation would end it, and waited for, before the audit log is
 * closed: a security review's client went away while an always-ask delete waited for the
 * person's answer, and the server closed the log under the call, which then held the delete's
 * request and nothing after it (no decision, no result, no end of the evaluation), signed, so
 * that nobody reading it could tell whether the file was deleted.
 */
class CallsUnderWay {
  private stopping = false;
  /** Why the server stops: what the calls it ends are aborted with (see cancelledBecause). */
  private stopReason: unknown = undefined;
  /** Each call under way, with what ends it. */
  private readonly running = new Map<Promise<unknown>, AbortController>();

  /**
   * Runs `call` with a signal aborted by the client's cancellation of it, or by the server's stop.
   * (A controller of its own, not AbortSignal.any over one signal that lives as long as the
   * server: each call's would stay tied to it.)
   */
  run<T>(extra: ToolExtra, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const cancel = (): void => controller.abort(extra.signal.reason);
    extra.signal.addEventListener("abort", cancel, { once: true });
    if (extra.signal.aborted) controller.abort(extra.signal.reason);
    else if (this.stopping) controller.abort(this.stopReason);
    const running = call(controller.signal);
    this.running.set(running, controller);
    const done = (): void => {
      this.running.delete(running);
      extra.signal.removeEventListener("abort", cancel);
    };
    running.then(done, done);
    return running;
  }

  /** Ends every call under way, and any that comes after, as a cancellation does (see settled); `reason`: why (a StoppedBySignal). */
  stop(reason?: unknown): void {
    this.stopping = true;
    this.stopReason = reason;
    for (const controller of this.running.values()) controller.abort(reason);
  }

  /** Settles once no call is under way (each has logged its end). */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running.keys()]);
  }
}

/**
 * Runs `use` with the warm spare sandbox (if one is ready) and what takes it back untouched (see
 * evaluate's giveBack), then starts the next spare once it has finished, unless it was given back.
 */
type WithSpare = <T>(use: (prestarted: SandboxProcess | undefined, giveBack: (unused: SandboxProcess) => void) => Promise<T>) => Promise<T>;

export interface ServeOptions {
  config: RunnerConfig;
  version: string;
  /** Aborted when the server is to stop (a signal): it stops as when its client goes away. */
  stop?: AbortSignal;
}

type LogLevel = "debug" | "info" | "notice" | "warning" | "error";

/**
 * Server-side logging: MCP logging messages (notifications/message, at the level the client
 * set with logging/setLevel), and stderr for a person watching (unless --quiet). Never code,
 * output or anything classified: what happened, not what it contained.
 */
function serverLog(server: McpServer, quiet: boolean) {
  return (level: LogLevel, message: string, toStderr = true): void => {
    if (toStderr && !quiet && level !== "debug") process.stderr.write(`tacit: ${message}\n`);
    if (server.isConnected()) void server.server.sendLoggingMessage({ level, logger: "tacit", data: message }).catch(() => undefined);
  };
}

/**
 * How the server stopped: its client went away (stdin ended), its transport closed under it, its
 * stdout was closed (no answer can reach the client), or it was told to (ServeOptions.stop).
 */
export type ServeEnd = "stdin ended" | "transport closed" | "stdout closed" | "told to stop";

export async function serve({ config, version, stop }: ServeOptions): Promise<ServeEnd> {
  // Many calls share this thread, and one can keep it busy for seconds (a large script's
  // validation): each sandbox's memory and time limits are held by a thread of its own too.
  watchSandboxesOffThread();
  const server = new McpServer({ name: "tacit", version }, { instructions: INSTRUCTIONS, capabilities: { logging: {} } });
  // The server's first request to the client is a ping, so that no question is ever request 0:
  // the SDK's client drops a cancellation of request id 0 (its check is "if (!requestId)"), and
  // a question withdrawn because its call ended stayed in front of the person (see gate.ts).
  // Once: a client may send notifications/initialized as often as it likes, and each one sent a
  // ping that waited a minute for its answer (400,000 of them made 50,000 pings and 240 MB).
  let pinged = false;
  server.server.oninitialized = () => {
    if (pinged) return;
    pinged = true;
    void server.server.ping().catch(() => undefined);
  };
  const log = serverLog(server, config.quiet);
  const recorder = config.recordPath ? new Recorder(config.recordPath) : null;
  // Approvals are asked of the client's user (elicitation); the audit log lives as long as the server.
  const oversight = await createOversight(config, process.cwd(), elicitationAsker(server.server));
  // One incremental checker for the server's life: a re-check costs milliseconds, not a process.
  // In a thread of its own, limited by the evaluations' time limit (see typecheck-thread.ts).
  let checker: ThreadedTypeChecker | undefined;
  const typeChecker: TypeChecker = (code, snippet) => (checker ??= new ThreadedTypeChecker(config.executionTimeoutMs, config.memoryLimitMb)).check(code, snippet);
  // A warm spare: the next call's sandbox boots while the client thinks. Its replacement is
  // started once this call has answered, so that a boot (tens of ms of CPU) does not compete
  // with the call (measured here, 100 ms between calls: median 29 ms when started as the
  // spare is taken, 18-20 ms after the answer). A call that comes right after an answer (a
  // client sending calls back to back) starts it at once instead, giving it a head start
  // (back to back: 86 ms at once, 103 ms after the answer, 90 ms this way; there every call
  // waits for most of a boot, since every one-shot call needs a fresh sandbox). While a
  // session's snippet runs, a spare still booting is stopped (see warm-spare.ts).
  // One-shot calls beyond the limit wait (in order) rather than each starting a sandbox at once.
  const evaluations = new ConcurrencyLimit(config.maxConcurrentEvaluations);
  // What all sessions and one-shot calls hold of classified plaintext together: each store's
  // own limit, times the sessions and calls a server holds, is more than the host has.
  const classifiedValues = HeapShare.quarterOfHeap();
  // The resident memory all pure evaluators hold together, apart from the sandboxes: the sessions'
  // and the one-shot calls' (each call's evaluator may grow to 512 MiB, maxConcurrentEvaluations at once).
  const evaluatorsMemory = new EvaluatorsMemory(config.evaluatorsMemoryLimitMb * 1024);
  const inFlight = new InFlightBound(CALLS_IN_FLIGHT_LIMIT, CODE_IN_FLIGHT_LIMIT_CHARS);
  // The classified work one-shot calls leave at their end, not waited for before they are answered
  // (see EvaluateOptions.leftWork): pending writes later calls read after, at most as many pieces as run at once.
  const leftOver = new LeftWork(config.maxConcurrentEvaluations);
  const leftWork = { pending: noPendingClassifiedWork(), keep: (work: Parameters<LeftWork["keep"]>[0]) => leftOver.keep(work) };
  const auditLogFailures = auditLogFailureAnswer(log);
  const auditLogFailed = auditLogFailures.answer;
  const slotFor = (signal?: AbortSignal): Slot => evaluations.slot(signal, () => new CancelledBeforeStart());
  const spares = new WarmSpare(config.memoryLimitMb);
  const calls = new CallsUnderWay();
  let lastAnswerAt = -Infinity;
  const replenish = (): void => spares.replenish();
  const withSpare: WithSpare = async (use) => {
    const taken = spares.take();
    const backToBack = monotonicMs() - lastAnswerAt < BACK_TO_BACK_MS;
    if (backToBack) setImmediate(replenish);
    try {
      return await use(taken, (unused) => spares.giveBack(unused));
    } finally {
      lastAnswerAt = monotonicMs();
      if (!backToBack) setImmediate(replenish);
    }
  };

  server.registerTool(
    "execute_typescript",
    {
      title: "Run TypeScript in the tacit sandbox",
      description:
        "Validates, type-checks and runs one TypeScript script (an ES module; top-level await allowed) against the tacit API " +
        "(see show_interface). Returns what it printed, or the precise error with script.ts:LINE:COL.",
      inputSchema: TOOL_ARGUMENTS.execute_typescript,
      outputSchema: resultShape,
    },
    async ({ code }, extra) =>
      calls.run(extra, (signal) =>
        admitted(inFlight, code, () =>
          withProgress(extra, async () => {
            let result: EvaluationResult;
            try {
              result = await slotFor(signal)(() =>
                withSpare((prestarted, giveBack) =>
                  evaluate({
                    code,
                    displayName: "script.ts",
                    config,
                    input: { kind: "unavailable", reason: "readInput(): an MCP call has no piped input; put the data in the script." },
                    signal,
                    typeChecker,
                    oversight,
                    classifiedValues,
                    evaluatorsMemory,
                    leftWork,
                    ...(prestarted ? { prestarted, giveBack } : {}),
                  }),
                ),
              );
            } catch (error) {
              const failed = auditLogFailed(error);
              if (failed !== null) result = failed;
              else if (error instanceof CancelledBeforeStart) {
                logAfterAnswer(log, "execute_typescript: cancelled while waiting for its turn; it never ran");
                return textResult(error.message, true);
              } else throw error;
            }
            recorder?.append({ kind: "execute_typescript", code, result });
            logAfterAnswer(log, `execute_typescript: ${result.outcome} (exit ${result.exitCode}) in ${result.durationMs} ms`);
            return toolResult(result);
          }),
        ),
      ),
  );

  const sessions = config.sessionEnabled ? registerSessionTools(server, config, withSpare, (work) => spares.inForeground(work), recorder, typeChecker, oversight, log, slotFor, classifiedValues, evaluatorsMemory, inFlight, leftOver, calls, auditLogFailed) : null;

  server.registerTool(
    "show_interface",
    {
      title: "Show the tacit API",
      description: "The TypeScript declarations (interface.d.ts) scripts are written against, with short examples.",
      inputSchema: TOOL_ARGUMENTS.show_interface,
    },
    async () => ({ content: [{ type: "text" as const, text: readFileSync(interfacePath, "utf8") + EXAMPLES }] }),
  );

  // Stdin passes through a line limit first: an oversized message is answered with an error
  // (or logged) and skipped, instead of making the SDK's transport close (see mcp-stdin.ts).
  const refuseOversized = ({ bytes, id }: OversizedMessage): void => {
    const what = `a message of ${bytes} bytes is longer than the ${MAX_MESSAGE_BYTES / (1024 * 1024)} MiB tacit serve reads; it was skipped, nothing in it ran`;
    if (id === null) {
      log("warning", `${what} (no request id could be read from it, so it is not answered)`);
      return;
    }
    log("warning", `${what} (request ${typeof id === "string" ? quotedName(id) : String(id)} is answered with an error)`);
    const advice = "; keep large data out of the call (have the script read it from a file with requestFileSystem)";
    void transport.send(answerToUnseen({ jsonrpc: "2.0" as const, id, error: { code: ErrorCode.InvalidRequest, message: what + advice } })).catch(() => undefined);
  };
  // A request read past what is kept for a client that reads nothing is answered at once and dropped (see limitedStdin).
  let toldOfFullInput = false;
  const refusePastTheBound: PastTheBound = {
    refuse: ({ id, code, problem }) => {
      // `id: null` for a line whose id cannot be told, as answerUnreadableRequests answers it.
      const answer = answerToUnseen({ jsonrpc: "2.0", id, error: { code, message: problem } });
      void transport.send(answer as JSONRPCMessage).catch(() => undefined);
      return JSON.stringify(answer).length;
    },
    // Said the first time only, as the unread answers are.
    onFull: (refused) => {
      if (toldOfFullInput) return;
      toldOfFullInput = true;
      log(
        "warning",
        `the client has written more than tacit keeps for it while it reads none of its answers` +
          (refused > 0 ? ` (${refused.toLocaleString("en-US")} requests past those kept, each answered with an error)` : "") +
          ": tacit reads nothing more from it until it reads them; said once (an MCP client must read what the server writes)",
      );
    },
  };
  const input = limitedStdin(process.stdin, MAX_MESSAGE_BYTES, refuseOversized, refusePastTheBound);
  // Its buffer is given room for more than one whole message, so that nothing the limit lets through can overflow it.
  const transport = new StdioServerTransport(input.stream, process.stdout, { maxBufferSize: 2 * MAX_MESSAGE_BYTES });
  await server.connect(transport);
  const offered: Record<string, z.ZodRawShape> = config.sessionEnabled
    ? TOOL_ARGUMENTS
    : Object.fromEntries(Object.entries(TOOL_ARGUMENTS).filter(([name]) => !(name in SESSION_TOOL_ARGUMENTS)));
  let toldOfUnreadAnswers = false;
  const unreadAnswers = waitForUnreadAnswers({
    transport,
    output: process.stdout,
    // The transport's stream, not stdin: requests are still read while held, up to a bound (see limitedStdin).
    input: input.stream,
    limitBytes: UNREAD_ANSWERS_LIMIT_BYTES,
    limitMessages: UNREAD_MESSAGES_LIMIT,
    holdEvaluations: (until) => void evaluations.whileHeld(until),
    // Said the first time only: a client that reads, but more slowly than it is answered, comes here again and again.
    onBackedUp: ({ bytes, messages }) => {
      if (toldOfUnreadAnswers) return;
      toldOfUnreadAnswers = true;
      log(
        "warning",
        `the client has left ${messages.toLocaleString("en-US")} answers (${(bytes / (1024 * 1024)).toFixed(1)} MiB) unread: tacit takes none of its requests ` +
          "and starts no evaluation until it has read them, then goes on; said once (an MCP client must read what the server writes)",
      );
    },
  });
  refuseMalformedRequests(transport, new Map(Object.entries(offered)));
  // Its answers pass through what waitForUnreadAnswers made of send; every message still reaches answerUnreadableRequests.
  refuseRequestIdsUnderWay(transport);
  answerUnreadableRequests(transport, input.passedOn);
  log("info", `serving MCP on stdio (tacit ${version}${oversight.audit ? `, audit log ${config.auditLog}` : ""})`);
  for (const warning of config.warnings) log("warning", warning, false); // stderr had them at startup
  // The server stops when stdin ends (the client is gone). A transport that closes while stdin
  // is still open is not that, and is said so, with the last transport error, if any.
  let lastTransportError: Error | null = null;
  const reportError = transport.onerror;
  transport.onerror = (error) => {
    lastTransportError = error;
    reportError?.(error);
  };
  const stopped = await new Promise<ServeEnd>((resolve) => {
    const closeProtocol = transport.onclose;
    transport.onclose = () => {
      closeProtocol?.();
      resolve("transport closed");
    };
    void input.ended.then(() => resolve("stdin ended"));
    // A client that closed its end of stdout (tacit's stdout fails with EPIPE, and is destroyed: see
    // cli/main.ts) hears nothing more. The server went on taking its requests, each held by the SDK
    // until an answer that could never be written (200,000 pings: 62 MB to 422 MB), and its calls
    // ran on, commands included, for no one.
    process.stdout.once("close", () => resolve("stdout closed"));
    if (stop?.aborted) resolve("told to stop");
    stop?.addEventListener("abort", () => resolve("told to stop"), { once: true });
  });
  if (stopped === "transport closed") {
    const why = lastTransportError ? `: ${(lastTransportError as Error).message}` : "";
    process.stderr.write(`tacit: the MCP transport closed while stdin was still open${why}; the server stops\n`);
  }
  if (stopped === "stdout closed") {
    process.stderr.write("tacit: the MCP client closed its end of stdout: no answer can reach it; the calls under way are ended as a cancellation ends them, and the server stops\n");
  }
  spares.close();
  // Nothing the server ends waits for a client that reads nothing (its calls held from starting).
  unreadAnswers.release();
  // The calls under way end first (their sessions' rebuilds stop as the sessions end), and have
  // logged how they ended before the log is closed.
  // Stopped by a signal, the calls it ends and the sessions' ends say which (as tacit run and repl do).
  const signalled = stopped === "told to stop" && stop?.reason instanceof StoppedBySignal ? stop.reason : null;
  if (signalled !== null) log("info", `stopped by ${signalled.signal}: the calls under way are ended as a cancellation ends them, and the server stops`);
  calls.stop(signalled ?? undefined);
  await sessions?.closeAll(signalled === null ? "the server stopped" : `the server was stopped by ${signalled.signal}`);
  await calls.settled();
  checker?.close();
  // The classified writes and secure output the last calls left land before the server stops.
  await leftWork.pending.finishing;
  // Closing it reports a failure no call saw (a timer's write or signing, a log cut after its last head).
  let closeFailure: Error | null = null;
  try {
    oversight.audit?.close();
  } catch (error) {
    if (!(error instanceof Error) || error.name !== "AuditLogError") throw error;
    closeFailure = error;
  }
  await server.close();
  // A log that failed while the server ran: tacit exits 2 for it, as tacit run does (cli/main.ts says why).
  const failure = auditLogFailures.failure() ?? closeFailure;
  if (failure !== null) throw failure;
  return stopped;
}

/** An execute_typescript call cancelled by its client while it waited for its turn. */
class CancelledBeforeStart extends Error {
  constructor() {
    super("cancelled: the call was cancelled while it waited for another execute_typescript call or session snippet to finish; it never ran");
  }
}

/** A UTF-16 surrogate with no partner: a code unit no UTF-8 text can hold. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Why `code` cannot run as it was sent, or null. A JSON string can carry a lone surrogate
 * ("\ud800"), but the sandbox and the type checker take code as UTF-8: the sandbox ran such a
 * string literal as U+FFFD without a word, and the checker panicked, answering with a Go stack
 * trace. (`tacit run` decodes its file or stdin as UTF-8, so its code never holds one.)
 */
function unsendableCode(code: string): string | null {
  const found = LONE_SURROGATE.exec(code);
  if (found === null) return null;
  const { line, column } = lineColumnOf(lineStarts(code), found.index);
  const unit = `\\u${found[0].charCodeAt(0).toString(16)}`;
  // In the checks' own form (script.ts:LINE:COL error [rule] …, then a hint).
  return (
    `script.ts:${line}:${column} error [lone-surrogate] the code holds a lone surrogate (${unit}, half of a UTF-16 pair without its ` +
    "other half), which tacit cannot run as written: it passes code on as UTF-8, which has no such character; nothing ran " +
    `(in a session, the session goes on as it was)\n  hint: Write it as an escape in a string literal ("${unit}"), or send the whole character.`
  );
}

/**
 * Runs a call that runs code if its code can run as sent and the server can hold it with those
 * already under way or waiting (InFlightBound); refuses it otherwise.
 */
async function admitted<R>(inFlight: InFlightBound, code: string, run: () => Promise<R>): Promise<R | ReturnType<typeof textResult> | ReturnType<typeof toolResult>> {
  const unsendable = unsendableCode(code);
  // Answered as a check's refusal is (exit 3, the same structured result), though nothing was checked.
  if (unsendable !== null) return toolResult({ outcome: "rejected", stdout: "", error: unsendable, exitCode: EXIT_CODES.rejected, durationMs: 0, truncated: false, warnings: [] });
  const admission = inFlight.admit(code.length);
  if ("refused" in admission) return textResult(admission.refused, true);
  try {
    return await run();
  } finally {
    admission.release();
  }
}

function textResult(text: string, isError = false) {
  return { content: [{ type: "text" as const, text }], ...(isError ? { isError: true } : {}) };
}

/**
 * sessionIdleMs in words: a config may set it below a minute (it was said as "0 idle minutes").
 */
function idleTimeText(ms: number): string {
  const plural = (count: number, unit: string): string => `${count.toLocaleString("en-US")} ${unit}${count === 1 ? "" : "s"}`;
  if (ms % 60_000 === 0) return plural(ms / 60_000, "minute");
  if (ms % 1000 === 0) return plural(ms / 1000, "second");
  return `${ms.toLocaleString("en-US")} ms`;
}

/** create_repl_session, execute_in_session, delete_repl_session, list_sessions. */
function registerSessionTools(
  server: McpServer,
  config: RunnerConfig,
  withSpare: WithSpare,
  inForeground: <T>(work: () => Promise<T>) => Promise<T>,
  recorder: Recorder | null,
  typeChecker: TypeChecker,
  oversight: Oversight,
  log: ReturnType<typeof serverLog>,
  slotFor: (signal?: AbortSignal) => Slot,
  classifiedValues: HeapShare,
  evaluatorsMemory: EvaluatorsMemory,
  inFlight: InFlightBound,
  leftOver: LeftWork,
  calls: CallsUnderWay,
  auditLogFailed: AuditLogFailureAnswer,
): { closeAll(reason: string): Promise<void> } {
  const sessions = new Map<string, ReplSession>();
  /** What all sessions keep of their replies together: each one's own limit, times maxSessions, is more than the host holds. */
  const recordings = HeapShare.quarterOfHeap();
  /** What all sessions keep of their snippets' code together (16 MiB of code a session, 100 sessions). */
  const keptCode = HeapShare.ofHeap(8);
  /** The resident memory all sessions' sandboxes hold together (768 MiB a session, 100 sessions). */
  const memory = new SessionsMemory(config.sessionsMemoryLimitMb * 1024);
  /** create_repl_session calls under way, not yet in `sessions`. */
  let creating = 0;
  /** Ended sessions whose snippets' classified work is still landing (the server's end waits for it). */
  const landing = new Set<Promise<void>>();
  /**
   * Sessions being ended (deleted, reclaimed): the server's end waits for them (closeAll), so
   * that each one's end is logged before the log is closed. A deletion sent as the client went
   * away was left half done: the log held the session's start and never its end.
   */
  const ending = new Set<Promise<void>>();
  const end = (session: ReplSession, reason: string): Promise<void> => {
    const ended = endNow(session, reason);
    ending.add(ended);
    const done = (): void => void ending.delete(ended);
    ended.then(done, done);
    return ended;
  };
  const endNow = async (session: ReplSession, reason: string): Promise<void> => {
    sessions.delete(session.id);
    // Its sandbox ends now; the classified work its snippets left lands afterwards, not waited for
    // (see ReplSession.end), and counts with the calls' work left running (LeftWork).
    await session.end();
    const finished = session.finished().catch((error: unknown) => log("warning", `session ${session.id}: what its snippets left could not land: ${(error as Error).message}`));
    landing.add(finished);
    void finished.then(() => landing.delete(finished));
    leftOver.keep({ settled: finished, stop: () => session.stopLeftWork() });
    try {
      oversight.audit?.append({ type: "session-ended", session: session.id, reason });
      oversight.audit?.signHead();
    } catch (error) {
      // The session has ended all the same; the log's failure is the operator's (said once), and
      // deleting a session answered the client with the log's message, its path included.
      if (auditLogFailed(error) === null) throw error;
    }
    log("info", `session ${session.id} ended: ${reason}`);
  };
  const reclaim = setInterval(() => {
    const now = Date.now();
    for (const session of sessions.values()) {
      // A session with a call under way is not idle, however long the call has taken.
      if (!session.busy && now - session.lastUsed > config.sessionIdleMs) void end(session, "reclaimed after being idle");
    }
  }, Math.min(60_000, config.sessionIdleMs));
  reclaim.unref();
  const idleTime = idleTimeText(config.sessionIdleMs);
  const unknown = (id: string) =>
    textResult(`no session ${quotedName(id)}: it was deleted, reclaimed after ${idleTime} idle, or never created; create one with create_repl_session`, true);

  server.registerTool(
    "create_repl_session",
    {
      title: "Create a REPL session",
      // The model learns here what reclaims a session and what bounds them, not from a call that finds its session gone.
      description:
        "A session keeps top-level const, let, function and class bindings across snippets run with execute_in_session; " +
        "a snippet's final expression is shown. Returns the session id. " +
        `A session with no call for ${idleTime} is reclaimed, its bindings lost; at most ${config.maxSessions} live at once: ` +
        "delete those you no longer need with delete_repl_session.",
      inputSchema: TOOL_ARGUMENTS.create_repl_session,
      outputSchema: { session_id: z.string() },
    },
    async (_arguments, extra) =>
      calls.run(extra, async (signal) => {
        // Sessions still being made count: calls sent together all passed the check before any
        // was added (a security review made 10 sessions under a limit of 3 that way).
        if (sessions.size + creating >= config.maxSessions) {
          return textResult(`too many live sessions (${config.maxSessions}); delete one with delete_repl_session first`, true);
        }
        // Counted from now on, so that sessions created together cannot pass the budget either.
        const account = memory.open();
        if ("refused" in account) return textResult(account.refused, true);
        creating++;
        let session: ReplSession;
        try {
          // The warm spare becomes the session's sandbox; the next spare boots meanwhile.
          // Its rebuilds take a slot as its snippets do; none waits on a cancellation.
          session = await withSpare(
            async (prestarted) => new ReplSession(config, prestarted, slotFor(), recordings, classifiedValues, keptCode, account, evaluatorsMemory),
          );
        } catch (error) {
          account.close();
          throw error;
        } finally {
          creating--;
        }
        // Cancelled while it was made: the SDK sends no answer to a cancelled call, so the client
        // never learns the id, and the session held a sandbox and one of maxSessions places until
        // reclaimed idle (30 minutes). Nothing is awaited from here to the answer, so a cancellation
        // that comes later finds the answer sent.
        if (signal.aborted) {
          void session.close().catch((error: unknown) => log("warning", `a session made for a cancelled call could not end: ${(error as Error).message}`));
          logAfterAnswer(log, "create_repl_session: cancelled while the session was made; it was ended at once");
          return textResult("cancelled: create_repl_session was cancelled while the session was made; it was ended, and no session was kept", true);
        }
        try {
          oversight.audit?.append({ type: "session-started", session: session.id });
        } catch (error) {
          const failed = auditLogFailed(error);
          if (failed === null) throw error;
          void session.close().catch(() => undefined);
          return textResult(auditLogFailedText("before a session"), true);
        }
        sessions.set(session.id, session);
        log("info", `session ${session.id} created (${sessions.size} live)`);
        return { content: [{ type: "text" as const, text: session.id }], structuredContent: { session_id: session.id } };
      }),
  );

  server.registerTool(
    "execute_in_session",
    {
      title: "Run a snippet in a REPL session",
      description:
        "Runs TypeScript in the session: earlier snippets' bindings are in scope, the final expression's value is shown. " +
        "A snippet that fails (validation, types, an exception, a timeout) leaves the session as it was.",
      inputSchema: TOOL_ARGUMENTS.execute_in_session,
      outputSchema: resultShape,
    },
    async ({ session_id, code }, extra) => {
      const session = sessions.get(session_id);
      if (!session) return unknown(session_id);
      return calls.run(extra, (signal) =>
        admitted(inFlight, code, async () => {
          try {
            // A snippet runs in a sandbox like any call: it takes one of the same slots (uncounted,
            // a client could run as many sandboxes at once as it had sessions: 100 by default).
            // A spare sandbox still booting waits meanwhile (see warm-spare.ts).
            const result = await withProgress(extra, () => inForeground(() => session.execute(code, { signal, typeChecker, oversight, slot: slotFor(signal) })));
            recorder?.append({ kind: "execute_in_session", sessionId: session_id, code, result });
            logAfterAnswer(log, `execute_in_session ${session_id}: ${result.outcome} (exit ${result.exitCode}) in ${result.durationMs} ms`);
            return toolResult(result);
          } catch (error) {
            const failed = auditLogFailed(error);
            if (failed !== null) return toolResult(failed);
            return textResult((error as Error).message, true);
          }
        }),
      );
    },
  );

  server.registerTool(
    "delete_repl_session",
    { title: "Delete a REPL session", description: "Ends the session and everything it holds.", inputSchema: TOOL_ARGUMENTS.delete_repl_session },
    async ({ session_id }) => {
      const session = sessions.get(session_id);
      if (!session) return unknown(session_id);
      await end(session, "deleted by the client");
      return textResult(`deleted ${session_id}`);
    },
  );

  server.registerTool(
    "list_sessions",
    {
      title: "List REPL sessions",
      description:
        "The live sessions, with their snippet counts, whether a snippet is running or waiting its turn (busy), and how long " +
        `each has been idle (0 while busy; one idle for ${idleTime} is reclaimed).`,
      inputSchema: TOOL_ARGUMENTS.list_sessions,
      outputSchema: { sessions: z.array(z.object({ session_id: z.string(), snippets: z.number(), busy: z.boolean(), idleMs: z.number() })) },
    },
    async () => {
      const now = Date.now();
      // A busy session is not idle (the reclaim spares it): its idle time counted on from its snippet's start, and
      // one whose snippet had run 29 minutes read as about to be reclaimed.
      const list = [...sessions.values()].map((s) => ({ session_id: s.id, snippets: s.snippetCount, busy: s.busy, idleMs: s.busy ? 0 : now - s.lastUsed }));
      return { content: [{ type: "text" as const, text: JSON.stringify(list) }], structuredContent: { sessions: list } };
    },
  );

  return {
    async closeAll(reason) {
      clearInterval(reclaim);
      await Promise.all([...sessions.values()].map((session) => end(session, reason)));
      // Those ended otherwise meanwhile (a deletion under way) too, and then what every one left.
      await Promise.allSettled([...ending]);
      await Promise.all([...landing]);
    },
  };
}
