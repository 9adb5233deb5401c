// One program's exchange with a sandbox: send it, answer its requests strictly in order (and
// carry out its posts, which nothing waits on, in the same order), and learn how it ended. A
// one-shot sandbox is killed once it has reported; a session's live sandbox is left waiting
// for its next snippet.

import type { Action, HostFrame, ScriptFailure, SandboxFrame } from "../library/protocol.js";
import { prepareFrameParsing } from "./frames.js";
import { requestMade } from "./jit-warmup.js";
import type { Decision } from "./monitor.js";
import type { Sandbox, SandboxEnd } from "./sandbox.js";

export type Reported = { kind: "done" } | { kind: "failed"; error: ScriptFailure };

/** "alive": a session's sandbox reported and waits for more; otherwise how the process ended. */
export type ProgramEnd = SandboxEnd | "alive";

export interface Conversation {
  /** Resolves once the sandbox has reported and every request is answered, or it has ended. */
  readonly end: Promise<ProgramEnd>;
  /** What the sandbox reported, if it did. */
  reported(): Reported | null;
  /** Resolves when every request received so far has been answered. */
  drained(): Promise<void>;
  /**
   * Whether a session's sandbox has reported its result but not yet read all of the host's
   * last reply, which the conversation waits for before the sandbox may wait for its next program.
   */
  unreadAfterReport(): boolean;
  /**
   * Whether the sandbox has reported its success but not yet finished writing the report
   * (see Sandbox.reportWritten), which the conversation waits for before it calls the program over.
   */
  writingAfterReport(): boolean;
}

/**
 * `answer` decides one request; null means it has ended the sandbox itself and nothing is
 * sent back. With `keepAlive`, a "done" leaves the process running.
 */
export function converse(
  sandbox: Sandbox,
  program: HostFrame,
  keepAlive: boolean,
  answer: (action: Action) => Promise<Decision | null>,
): Conversation {
  let reported: Reported | null = null;
  let queue: Promise<void> = Promise.resolve();
  let finish: (end: ProgramEnd) => void = () => undefined;
  const whenReported = new Promise<ProgramEnd>((resolve) => (finish = resolve));
  // Once the sandbox has reported and every request is answered, the program is over: a
  // one-shot process is killed, and its exit (Deno's teardown takes milliseconds) is not waited for.
  let unreadAfterReport = false;
  let writingAfterReport = false;
  const afterReport = (how: Reported): void => {
    reported = how;
    void queue.then(async () => {
      // A session's sandbox is left waiting for its next program only once it has taken all the
      // host wrote to it. The stub reads each reply whole before it sends anything more, but code
      // that reads the channel itself (it can replace TextDecoder's decode, which the stub calls)
      // stopped reading a 180 MB reply after its first piece, reported "done" and blocked: the
      // snippet succeeded, and tacit serve held the rest of the reply for as long as the session
      // lived, about 500 MB a session in a security review (3 GB for six idle sessions). Until it
      // has read it, the program is not over, and the time limit still runs.
      if (keepAlive && how.kind === "done" && sandbox.killed === null && sandbox.holdsUnwritten) {
        unreadAfterReport = true;
        await sandbox.written();
        unreadAfterReport = false;
      }
      // Nor is a program that succeeded over until its sandbox has finished writing the report (a
      // one-shot's too): what it wrote after the report (agent code can make the report's write
      // carry more) ends it, and the program fails. A failure is one whatever comes after it.
      if (how.kind === "done" && sandbox.killed === null) {
        writingAfterReport = true;
        await sandbox.reportWritten();
        writingAfterReport = false;
      }
      // A session's sandbox stays for the next snippet only if nothing ended it meanwhile: a post
      // the host refused (read in the same chunk as the report) kills it, and that is the result.
      if (keepAlive && how.kind === "done" && sandbox.killed === null) {
        // It waits, blocked, for the next program: from now on it must not run at all, nor write.
        sandbox.awaitProgram();
        if (sandbox.killed === null) sandbox.watchIdle();
        // Its first look (a session of tacit serve) may end it: see SandboxProcess.watchIdle.
        if (sandbox.killed === null) return finish("alive");
      }
      sandbox.kill("finished", how.kind);
      finish(sandbox.killed!); // the first reason, if it was killed for another before
    });
  };

  // The stub sends a request only once the previous one is answered (it blocks on the reply).
  // A second one before that is hostile: answered strictly in order, requests sent ahead
  // without waiting would each be parsed and held by the host until their turn, and behind
  // one slow request (a person being asked, with the clock paused) that grows without bound.
  let unanswered = false;
  /**
   * The host could not answer a request (or carry out a post): the sandbox ends. An audit log that
   * can no longer be written (--audit-log; the log's failure is named by its error's name) is said
   * apart, with no host internals: the log's path and message are for the operator, on tacit's
   * stderr (a script was told "the host failed to answer a request: AuditLogError: the audit log
   * /home/op/… grew by …", a class name and a path outside its scope, as a protocol violation of its own).
   */
  const endOnHostFailure = (error: unknown, what: string): void => {
    if (error instanceof Error && error.name === "AuditLogError") sandbox.kill("audit-log", `while tacit was to ${what} of the script`);
    else sandbox.kill("protocol", `the host failed to ${what}: ${String(error)}`);
  };
  /**
   * Whether a look at the next turn of the event loop is already set (see below): one serves every
   * request that comes before it, where the host answers several in one turn (reading them spinning).
   */
  let spinLookSet = false;
  const stopSpinningIfUnanswered = (): void => {
    spinLookSet = false;
    if (unanswered) sandbox.spin(false);
  };
  let violated = false;
  sandbox.onFrame((frame: SandboxFrame) => {
    if (violated) return;
    if (reported) {
      // Nothing may come between a report and the next program: the sandbox waits on stdin.
      sandbox.kill("protocol", `the sandbox sent a ${frame.type} frame after reporting its result`);
      return;
    }
    switch (frame.type) {
      case "request": {
        // The stub waits for each reply, so requests are answered strictly in order.
        const { id, action } = frame;
        if (unanswered) {
          violated = true;
          sandbox.kill("protocol", `the sandbox sent request ${id} before its previous request was answered`);
          return;
        }
        unanswered = true;
        requestMade();
        // A request the host answers at once is waited for spinning (see sandbox-input.ts); one it
        // is still answering once the event loop comes round is waited for sleeping. Not spinning,
        // there is nothing to stop (and nothing starts spinning before this request is answered):
        // an immediate for each request cost a small read some 8 µs of the host's CPU.
        if (sandbox.spinning && !spinLookSet) {
          spinLookSet = true;
          setImmediate(stopSpinningIfUnanswered);
        }
        queue = queue.then(async () => {
          // Nor is a request answered while the host still holds part of the previous reply:
          // the stub reads a reply whole before its next request, but code with the raw channel
          // could leave each reply unread and send the next request once the host had answered.
          // Every reply then stayed in the host (a review's flood of 4 MB file reads grew it by
          // 294 MB in 9 s, up to the time limit). Waiting here holds at most one reply; a
          // further request meanwhile is a second unanswered one, and ends the sandbox.
          await sandbox.written();
          const decision = await answer(action);
          if (decision === null) return;
          unanswered = false;
          sandbox.send(decision.ok ? { type: "reply", id, ok: true, value: decision.value } : { type: "reply", id, ok: false, error: decision.error });
          // Its next request is likely to follow soon, and to be answered at once: both sides
          // wait for it spinning, the host for a short while (see spin-read.ts).
          sandbox.spin(true);
          sandbox.awaitOutputSpinning();
        });
        queue.catch((error: unknown) => endOnHostFailure(error, "answer a request"));
        return;
      }
      case "post": {
        // Printing, which the stub does not wait on: carried out in order with the requests
        // around it, and answered by nobody. It comes only while no request is unanswered (the
        // stub is blocked then), and one the host cannot carry out (a classified handle never
        // issued: the library sends none) ends the sandbox, as there is no call to throw from.
        if (unanswered) {
          violated = true;
          sandbox.kill("protocol", "the sandbox sent a post while a request was unanswered");
          return;
        }
        const { action } = frame;
        queue = queue.then(async () => {
          const decision = await answer(action);
          if (decision !== null && !decision.ok) sandbox.kill("protocol", `the sandbox posted a ${action.kind} the host refused: ${decision.error.message}`);
        });
        queue.catch((error: unknown) => endOnHostFailure(error, "carry out a post"));
        return;
      }
      case "done":
        sandbox.spin(false);
        afterReport({ kind: "done" });
        return;
      case "failed":
        sandbox.spin(false);
        afterReport({ kind: "failed", error: frame.error });
        return;
    }
  });
  sandbox.watchMemory(true);
  sandbox.send(program);
  // The frame schemas are built while the sandbox starts on the program, not before sending it.
  setImmediate(prepareFrameParsing);

  return {
    end: Promise.race([sandbox.ended, whenReported]),
    reported: () => reported,
    drained: () => queue.catch(() => undefined),
    unreadAfterReport: () => unreadAfterReport,
    writingAfterReport: () => writingAfterReport,
  };
}
