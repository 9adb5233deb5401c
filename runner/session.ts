// REPL sessions: snippets that build on each other, run one after another in the session's
// one live sandbox. Each snippet is its own module; it ends by publishing its top-level
// bindings as accessors on the sandbox's global object (see snippet-module.ts), so later
// snippets read and assign them live and earlier closures see the change. The checks see the
// whole program (earlier snippets, then this one), so types and names carry over.
//
// A snippet that fails at run time, times out or is cancelled ends the sandbox. The session
// then starts a new one and replays its successful snippets into it, answering their
// requests from the recording of their first run (nothing is performed twice, nothing is
// shown again), so it keeps exactly the bindings of its successful snippets.

import { CapabilityTable } from "./capabilities.js";
import { ClassifiedStore } from "./classified/store.js";
import { PureEvaluator } from "./classified/pure-evaluator.js";
import type { SessionTypeCheck, TypeChecker } from "./checks.js";
import type { Oversight } from "./approval/gate.js";
import type { RunnerConfig } from "./config.js";
import { converse } from "./conversation.js";
import { evaluate, exchangeDigest, EXIT_CODES, type EvaluationResult, noPendingClassifiedWork, type SessionState } from "./evaluate.js";
import { HeapShare } from "./heap-share.js";
import { type RecordedExchange, SessionRecording } from "./session-recording.js";
import type { Slot } from "./concurrency-limit.js";
import { HostSecrets } from "./host-secrets.js";
import { SESSION_CODE_LIMIT_CHARS } from "./limits.js";
import { LiveSandbox } from "./live-sandbox.js";
import { randomToken, randomUint32 } from "./random-token.js";
import type { SandboxProcess } from "./sandbox-process.js";
import { FailureNotes, SecureSink } from "./secure-sink.js";
import { lineStarts } from "./source-position.js";
import { cancelledExitCode } from "./stop-reason.js";
import type { ParsedProgram } from "./parser.js";
import { checkedTreeLimit, millions, ProbeCancelled, probeTree, treeLimitText } from "./nesting.js";
import { SessionParse } from "./session-parse.js";
import { type SnippetShape, snippetShape, SplitState } from "./split-check.js";
import { snippetForSandbox } from "./snippet-module.js";
import type { EvaluatorsMemory, SessionMemoryAccount } from "./sessions-memory.js";

const DISPLAY_NAME = "script.ts";

const DIVERGED =
  "replaying the session's earlier snippets asked for something else than they did the first time " +
  "(an earlier snippet depends on something that changes between runs, such as the clock or crypto.getRandomValues, " +
  "and it changed what the snippet did). The session cannot go on from here: create a new session, and keep such " +
  "values out of what later snippets build on (after a snippet fails, the session's sandbox is rebuilt by re-running " +
  "the successful snippets, with their effects answered from a recording)";

/** Why a session whose sandbox went on running between snippets cannot go on (a rebuild would replay what started it). */
function lingered(detail: string): string {
  return (
    `the session's sandbox was ended between snippets: ${detail}. Something an earlier snippet started (a worker ` +
    "thread) went on running after its snippet had ended, where neither the time limit nor the memory limit applies, " +
    "and rebuilding the session would replay the snippet that started it. Create a new session, and end everything a " +
    "snippet starts before the snippet ends"
  );
}

/** Why a snippet that waited for its turn did not run: the session ended meanwhile. */
const ENDED_BEFORE_ITS_TURN =
  "the session ended (deleted by the client, reclaimed after being idle, or the server stopping) while this snippet " +
  "waited for its turn behind an earlier one; it never ran. Create a new session with create_repl_session";

const MIB = 1024 * 1024;

/** Why a snippet that would take the session's code past SESSION_CODE_LIMIT_CHARS is refused. */
function tooMuchCode(kept: number, snippet: number): string {
  const mib = (chars: number): string => (chars / MIB).toFixed(1);
  return (
    `refused before it was checked: the session's snippets together would be ${mib(kept + snippet)} MiB of code ` +
    `(${mib(kept)} MiB kept from earlier snippets, ${mib(snippet)} MiB in this one), more than the ` +
    `${mib(SESSION_CODE_LIMIT_CHARS)} MiB a session keeps: every snippet is checked together with all the earlier ones. ` +
    "The session goes on as it was. Keep large data out of the code (put it in a file and read it with " +
    "requestFileSystem), or create a new session (or run the script with execute_typescript)"
  );
}

/** Why a snippet is refused when all the server's sessions together keep as much code as it holds. */
function tooMuchCodeInAll(share: HeapShare, snippet: number): string {
  const mib = (bytes: number): string => (bytes / MIB).toFixed(1);
  return (
    `refused before it was checked: the server's sessions together already keep as much code as it holds for them ` +
    `(${mib(share.limitBytes)} MiB, an eighth of tacit's heap limit; this snippet would take ${mib(snippet)} MiB more, ` +
    "counting the copy the sandbox runs). The session goes on as it was. Delete sessions no longer needed, or keep large " +
    "data out of the code (put it in a file and read it with requestFileSystem)"
  );
}

/**
 * Why a snippet that would take the session's syntax tree past what the host checks at once is
 * refused: every snippet is checked with all the earlier ones, a snippet within the limit alone
 * made the whole grow past it, and 11 snippets of 90 KB killed a tacit serve with a 250 MB heap.
 */
function tooLargeTree(kept: number, snippet: number, limit: number): string {
  return (
    `refused before it was checked: the session's snippets together would make a syntax tree of ${millions(kept + snippet)} M characters ` +
    `(${millions(kept)} M from earlier snippets, ${millions(snippet)} M from this one), more than ${treeLimitText(limit)}: ` +
    "every snippet is checked together with all the earlier ones. The session goes on as it was. Create a new session (or run " +
    "the script with execute_typescript), and keep large data out of the code (put it in a file and read it with requestFileSystem)"
  );
}

/** What a snippet adds to the session's tree besides its own: the empty statement of the "\n;\n" after it. */
const JOINT_TREE_CHARS = 128;

/** What a kept snippet costs the host: its text and the sandbox's copy of it, two bytes a character. */
const keptCodeBytes = (code: string): number => code.length * 2 * 2;

/** Positions in the checks' messages refer to the whole program; the agent sees its snippet's lines. */
function shiftLines(text: string | null, lines: number): string | null {
  if (text === null || lines === 0) return text;
  return text.replace(new RegExp(`${DISPLAY_NAME.replace(".", "\\.")}:(\\d+):(\\d+)`, "g"), (whole, line: string, column: string) =>
    Number(line) > lines ? `${DISPLAY_NAME}:${Number(line) - lines}:${column}` : whole,
  );
}

export interface ExecuteOptions {
  /** Aborting it stops the snippet for real (an MCP client's cancellation). */
  signal?: AbortSignal;
  typeChecker?: TypeChecker;
  oversight?: Oversight;
  /**
   * Runs the snippet once a slot is free (tacit serve's maxConcurrentEvaluations), taken when
   * its turn in the session comes, so snippets queued behind each other hold none.
   */
  slot?: Slot;
  /**
   * Test-only, reachable only through this API (never from the CLI, MCP or the REPL): runs the
   * snippet without the validator, as agent code that defeats it would (see EvaluateOptions).
   */
  unsafeSkipValidation?: boolean;
}

interface Snippet {
  code: string;
  /** The module the sandbox ran. */
  sandboxCode: string;
  /** Its requests and the host's answers, for a replay. */
  recording: RecordedExchange[];
}

export class ReplSession {
  readonly id = `s${randomToken(12)}`;
  /** A rebuilt sandbox draws the same Math.random numbers as the one it replaces (see StartFrame). */
  private readonly randomSeed = randomUint32();
  readonly createdAt = Date.now();
  lastUsed = Date.now();
  private readonly snippets: Snippet[] = [];
  /** Whether the type checker may check a new snippet apart from the earlier ones (split-check.ts). */
  private readonly splitState = new SplitState();
  /** The size of the successful snippets' syntax tree, in characters of its JSON (nesting.ts): bounded by checkedTreeLimit. */
  private treeSize = 0;
  /** The checks' parse of the successful snippets, kept (see session-parse.ts). */
  private readonly parse = new SessionParse();
  /** What the snippets' effects answered, kept to replay them; bounded (see session-recording.ts). */
  private readonly recording: SessionRecording;
  private readonly state: SessionState;
  private live: LiveSandbox | null;
  /** A rebuild under way (started as soon as a snippet has ended the sandbox and a slot is free). */
  private rebuilding: Promise<void> | null = null;
  /** The rebuild has its slot and runs (close waits for it; one still waiting for a slot will not start). */
  private rebuildRunning = false;
  /** Why the session cannot go on, once a rebuild has failed. */
  private broken: string | null = null;
  private closed = false;
  /** Snippets run one at a time, in the order they came: each waits for the one before. */
  private turn: Promise<unknown> = Promise.resolve();
  /** Calls under way: running, or waiting for their turn or a slot. */
  private underway = 0;

  /**
   * `prestarted`: a warm sandbox to become the session's (used if started with the config's limits).
   * `rebuildSlot`: runs a rebuild once a slot is free (tacit serve's maxConcurrentEvaluations):
   * a rebuild replays every earlier snippet in a sandbox of its own, after the failed snippet's
   * slot is given back.
   * `recordings`, `classifiedValues`, `keptCode`: what all the server's sessions keep of their
   * replies, hold of classified plaintext, and keep of their snippets' code, together (see heap-share.ts).
   * `memory`: the session's share of the resident memory the server's sessions hold together
   * (see sessions-memory.ts): its sandboxes are counted in it, and it is closed as the session ends.
   * `evaluatorsMemory`: what the server's sessions' pure evaluators hold together (see
   * EvaluatorsMemory): this session's evaluator is counted in it.
   */
  constructor(
    private readonly config: RunnerConfig,
    prestarted?: SandboxProcess,
    private readonly rebuildSlot?: Slot,
    recordings?: HeapShare,
    classifiedValues?: HeapShare,
    private readonly keptCode: HeapShare = HeapShare.unbounded(),
    private readonly memory?: SessionMemoryAccount,
    evaluatorsMemory?: EvaluatorsMemory,
  ) {
    const pure = new PureEvaluator(config.classifiedStoreLimitBytes, evaluatorsMemory, config.pureIdleStopMs, config.pureJobTimeoutMs);
    const sink = config.library.secureOutput ? new SecureSink(config.library.secureOutput) : null;
    const notes = new FailureNotes();
    const classified = new ClassifiedStore(pure, notes.note, config.classifiedStoreLimitBytes, config.classifiedValuesLimit, classifiedValues);
    this.state = { classified, pure, sink, notes, capabilities: new CapabilityTable(), pending: noPendingClassifiedWork() };
    this.recording = new SessionRecording(config.sessionRecordingLimitBytes, recordings);
    this.live = new LiveSandbox(config.memoryLimitMb, this.randomSeed, prestarted, memory);
  }

  get snippetCount(): number {
    return this.snippets.length;
  }

  /**
   * Whether a call is under way (running, or waiting for its turn): such a session is not idle,
   * whenever its last snippet started. An idle reclaim that looked only at that ended a snippet
   * that ran longer than sessionIdleMs, and the session with it.
   */
  get busy(): boolean {
    return this.underway > 0;
  }

  /**
   * Runs a snippet after any still running (a client may send the next one before the last
   * has ended, say right after cancelling it).
   */
  execute(code: string, extra: ExecuteOptions = {}): Promise<EvaluationResult> {
    this.underway++;
    const result = this.turn
      .then(() => (extra.slot ? extra.slot(() => this.run(code, extra)) : this.run(code, extra)))
      .finally(() => {
        this.underway--;
        this.lastUsed = Date.now();
      });
    this.turn = result.catch(() => undefined);
    return result;
  }

  private async run(code: string, extra: ExecuteOptions): Promise<EvaluationResult> {
    const { config } = this;
    this.lastUsed = Date.now();
    // What every later check reads grows with each snippet kept: bounded, refused before any work.
    const kept = this.snippets.reduce((chars, snippet) => chars + snippet.code.length, 0);
    if (kept + code.length > SESSION_CODE_LIMIT_CHARS) {
      return { outcome: "rejected", exitCode: EXIT_CODES.rejected, stdout: "", error: tooMuchCode(kept, code.length), durationMs: 0, truncated: false, warnings: [] };
    }
    // Taken now, given back unless the snippet is kept (and by close() if it is).
    const codeBytes = keptCodeBytes(code);
    if (!this.keptCode.take(codeBytes)) {
      return { outcome: "rejected", exitCode: EXIT_CODES.rejected, stdout: "", error: tooMuchCodeInAll(this.keptCode, codeBytes), durationMs: 0, truncated: false, warnings: [] };
    }
    let codeKept = false;
    try {
      const live = await this.liveSandbox();
      if (!live) {
        const error = this.broken ?? (this.closed ? ENDED_BEFORE_ITS_TURN : "the session's sandbox is gone; create a new session");
        return { outcome: "protocol-error", exitCode: EXIT_CODES["protocol-error"], stdout: "", error, durationMs: 0, truncated: false, warnings: [] };
      }
      // Cancelled while it waited (for a rebuild, say): it never ran, and the sandbox is left as
      // it is for the next snippet. Sent on, the cancellation killed the sandbox just rebuilt,
      // which cost another rebuild.
      if (extra.signal?.aborted) {
        const error = "cancelled: the snippet was cancelled before it ran (while it waited for its turn in the session); the session is as it was";
        return { outcome: "cancelled", exitCode: cancelledExitCode(extra.signal.reason), stdout: "", error, durationMs: 0, truncated: false, warnings: [] };
      }
      // The checks read the whole program's tree: measured a snippet at a time, bounded in all.
      let probe: Awaited<ReturnType<typeof probeTree>> | null;
      try {
        probe = extra.unsafeSkipValidation ? null : await probeTree(code, extra.signal);
      } catch (error) {
        if (!(error instanceof ProbeCancelled) || !extra.signal?.aborted) throw error;
        // Cancelled while its probe ran or waited (see ProbeCancelled): it never reached the sandbox, left as it is.
        const stopped = "cancelled: the snippet was cancelled before it ran (while it was measured for its checks); the session is as it was";
        return { outcome: "cancelled", exitCode: cancelledExitCode(extra.signal.reason), stdout: "", error: stopped, durationMs: 0, truncated: false, warnings: [] };
      }
      const treeLimit = checkedTreeLimit();
      if (probe !== null && probe.refusal === null && this.treeSize + probe.size > treeLimit) {
        return { outcome: "rejected", exitCode: EXIT_CODES.rejected, stdout: "", error: tooLargeTree(this.treeSize, probe.size, treeLimit), durationMs: 0, truncated: false, warnings: [] };
      }
      // Each earlier snippet ends with a line of its own holding ";", so that no two snippets
      // read as one statement to the checks (a snippet starting with "(" or "`" would
      // otherwise call the last one's final expression).
      const prefix = this.snippets.map((snippet) => `${snippet.code}\n;\n`).join("");
      const offset = prefix.length;
      const prefixLines = lineStarts(prefix).length - 1;
      const record = this.recording.snippet();
      // Parsed once for the validator and for the type check's question below.
      let program: ParsedProgram | null | undefined;
      const parsed = (): ParsedProgram | null => (program === undefined ? (program = this.parse.programWith(code)) : program);
      let shape: SnippetShape | null = null;
      let shadowsGlobal: Promise<boolean> | null = null;
      const typeCheck: SessionTypeCheck = {
        plan: () => {
          const whole = parsed();
          if (whole === null) return null;
          shape = snippetShape((whole.program.body as unknown as Array<{ start: number }>).filter((statement) => statement.start >= offset));
          return this.splitState.checkFor(prefix, shape);
        },
        checked: (answer) => (shadowsGlobal = answer),
      };
      let sandboxCode = "";
      let result: EvaluationResult;
      const given = live.snippetsGiven;
      try {
        result = await evaluate({
          code: prefix + code,
          displayName: DISPLAY_NAME,
          config,
          input: { kind: "unavailable", reason: "readInput(): a session snippet has no piped input; put the data in the snippet." },
          session: {
            id: this.id,
            state: this.state,
            live,
            snippet: code,
            parsed,
            typeCheck,
            record,
            ...(probe !== null ? { probed: probe.refusal } : {}),
            sandboxCode: (imports, sites) => (sandboxCode = snippetForSandbox(code, offset, imports, sites)),
          },
          ...(extra.signal ? { signal: extra.signal } : {}),
          ...(extra.typeChecker ? { typeChecker: extra.typeChecker } : {}),
          ...(extra.oversight ? { oversight: extra.oversight } : {}),
          ...(extra.unsafeSkipValidation ? { unsafeSkipValidation: true } : {}),
        });
      } catch (error) {
        this.replaceSandbox(live, false);
        throw error;
      }
      if (result.outcome === "ok") {
        this.snippets.push({ code, sandboxCode, recording: record.exchanges });
        // A session closed meanwhile has given back what it kept already.
        codeKept = !this.closed;
        this.parse.append(code);
        if (probe !== null) this.treeSize += probe.size + JOINT_TREE_CHARS;
        this.splitState.append(shape, shadowsGlobal);
        this.recording.commit();
        // Past the limit, no replay is possible: what was kept is let go.
        if (!this.recording.complete) for (const snippet of this.snippets) snippet.recording = [];
      } else {
        this.recording.release();
        // A snippet that never reached the sandbox (rejected, or cancelled during its checks)
        // leaves it as it was; anything else that went wrong ended it.
        if (live.snippetsGiven !== given || !live.usable) this.replaceSandbox(live, false);
      }
      // The checks saw the whole program; the sandbox ran the snippet alone.
      return result.outcome === "rejected" ? { ...result, error: shiftLines(result.error, prefixLines) } : result;
    } finally {
      if (!codeKept) this.keptCode.give(codeBytes);
      this.lastUsed = Date.now();
    }
  }

  /** Settles once the session has ended and what its snippets left has landed (see end). */
  private released: Promise<void> | null = null;

  /** Ends the session and waits for everything it left (see end and finished). */
  async close(): Promise<void> {
    await this.end();
    await this.finished();
  }

  /**
   * Ends the session's sandbox (and a rebuild under way) now; the classified work its snippets
   * left (writes, the secure output) goes on, each snippet's within its time limit (see
   * SessionState.pending), and `finished()` settles once it has landed and the session has given
   * back what it held. tacit serve answers delete_repl_session here: waiting for that work, the
   * answer came when the map functions computing it had finished, and the next call's Date.now()
   * minus a time the last snippet saved told how long they ran on a secret. `why`: what a
   * snippet under way is told ("cancelled: …").
   */
  async end(why = "the session ended"): Promise<void> {
    this.closed = true;
    this.parse.release();
    if (this.rebuildRunning) await this.rebuilding;
    await this.live?.end(why);
    this.live = null;
    // Its sandbox is gone (a rebuild under way ended above, and none starts once closed).
    this.memory?.close();
    this.released ??= this.release();
  }

  /** Settles once the session has ended (see end) and everything it left has landed. */
  finished(): Promise<void> {
    return this.released ?? this.close();
  }

  /** Stops the classified work the snippets left now, as their time limits would (its values written and printed as unavailable). */
  stopLeftWork(): void {
    void this.state.pure.close();
  }

  private async release(): Promise<void> {
    await this.state.pending.finishing;
    this.recording.close();
    this.state.classified.release();
    for (const snippet of this.snippets.splice(0)) this.keptCode.give(keptCodeBytes(snippet.code));
    await this.state.pure.close();
    await this.state.sink?.flush().catch(() => undefined);
    this.state.sink?.close();
  }

  /**
   * The session cannot go on: every later snippet is answered with `reason`. What it kept to
   * replay its snippets (their code, replies and parse) is given back now, and the rest (its
   * classified values, evaluator, secure output) as the session ends (see end): a broken session
   * held them until it was deleted or reclaimed idle (30 minutes), while the message it answered
   * with told the agent to create a new session, whose snippets the shares it held could refuse.
   */
  private breakWith(reason: string): void {
    this.broken ??= reason;
    for (const snippet of this.snippets.splice(0)) this.keptCode.give(keptCodeBytes(snippet.code));
    this.recording.close();
    this.parse.release();
    // Nothing awaits this end until the session is deleted or reclaimed (which then reports how
    // what it left went, see finished); a rejection unhandled meanwhile would end the server.
    void this.end("the session cannot go on")
      .then(() => this.released)
      .catch(() => undefined);
  }

  /** The sandbox for the next snippet, after any rebuild; null if the session is broken. */
  private async liveSandbox(): Promise<LiveSandbox | null> {
    await this.rebuilding;
    // Here the snippet holds its slot already, and waits for the rebuild: it runs in that slot.
    if (this.live && !this.live.usable) this.replaceSandbox(this.live, true);
    await this.rebuilding;
    return this.broken ? null : this.live;
  }

  /**
   * Ends `old` and starts rebuilding as soon as a slot is free (at once when `inSlot`: the caller
   * holds one), so the next snippet finds the new sandbox ready.
   */
  private replaceSandbox(old: LiveSandbox, inSlot: boolean): void {
    this.live = null;
    void old.end("replaced after a failed snippet");
    const detail = old.lingered;
    if (detail !== null) {
      this.breakWith(lingered(detail));
      return;
    }
    const rebuild = inSlot || !this.rebuildSlot ? this.rebuild() : this.rebuildSlot(() => this.rebuild());
    this.rebuilding = rebuild.finally(() => (this.rebuilding = null));
  }

  private async rebuild(): Promise<void> {
    if (this.closed) return;
    this.rebuildRunning = true;
    try {
      await this.rebuildNow();
    } finally {
      this.rebuildRunning = false;
    }
  }

  private async rebuildNow(): Promise<void> {
    if (!this.recording.complete) {
      const limit =
        this.recording.lostTo === "server"
          ? `took the recorded replies of all this server's sessions together past ${this.recording.poolLimitBytes} bytes, ` +
            "the most they keep (a quarter of tacit's heap limit) to replay them"
          : `passed ${this.recording.limitBytes} bytes of recorded replies (sessionRecordingLimitBytes), the most a session keeps to replay them`;
      this.breakWith(
        `the session's sandbox could not be rebuilt after the failed snippet: its snippets' effects ${limit}, ` +
          "so the earlier snippets' bindings are lost; create a new session (delete the ones you no longer need), and read " +
          "large files in execute_typescript calls or a few times, not over and over in one session",
      );
      return;
    }
    let live: LiveSandbox | null = null;
    try {
      live = new LiveSandbox(this.config.memoryLimitMb, this.randomSeed, undefined, this.memory);
      for (const [index, snippet] of this.snippets.entries()) {
        if (this.closed) break;
        const failure = await replay(live, snippet, this.config);
        if (failure !== null) {
          this.breakWith(failure === DIVERGED ? failure : `the session's sandbox could not be rebuilt: replaying snippet ${index + 1} ${failure}; create a new session`);
          await live.end("the rebuild failed");
          return;
        }
      }
    } catch (error) {
      this.breakWith(`the session's sandbox could not be rebuilt (${(error as Error).message}); create a new session`);
      await live?.end("the rebuild failed");
      return;
    }
    if (this.closed) await live.end("the session ended");
    else this.live = live;
  }
}

/**
 * Runs one earlier snippet again in a rebuilt sandbox, answering each request from the
 * recording; returns null, or why it did not go as the first time.
 */
async function replay(live: LiveSandbox, snippet: Snippet, config: RunnerConfig): Promise<string | null> {
  const { sandbox } = live;
  sandbox.scrubReplies(HostSecrets.of(config));
  const clock = sandbox.timeLimit(config.executionTimeoutMs, () => sandbox.kill("timeout", `it ran longer than ${config.executionTimeoutMs} ms`));
  let next = 0;
  const conversation = converse(sandbox, live.programFrame(snippet.sandboxCode, DISPLAY_NAME), true, async (action) => {
    const expected = snippet.recording[next++];
    if (expected && expected.actionDigest === exchangeDigest(action)) return expected.decision;
    sandbox.kill("protocol", DIVERGED);
    return null;
  });
  const end = await conversation.end;
  clock.stop();
  await conversation.drained();
  if (end === "alive") return next === snippet.recording.length ? null : DIVERGED;
  if (end.kind === "killed" && end.detail === DIVERGED) return DIVERGED;
  const reported = conversation.reported();
  if (reported?.kind === "failed") return `threw: ${reported.error.message}`;
  return end.kind === "killed" ? `was stopped: ${end.detail}` : `ended the sandbox (${end.signal ? `signal ${end.signal}` : `exit code ${end.code}`})`;
}
