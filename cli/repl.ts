// `tacit repl`: an interactive prompt over a REPL session, for people building or testing
// policies. Line editing and history come from node:readline; input continues over several
// lines while what was typed is an unfinished statement.

import { createInterface } from "node:readline";
import { Transform } from "node:stream";
import { parseSync } from "../runner/parser.js";
import type { RunnerConfig } from "../runner/config.js";
import { ReplSession } from "../runner/session.js";
import { rawTerminalAsker, terminalAsker } from "../runner/approval/askers.js";
import { createOversight } from "../runner/approval/oversight.js";
import { ThreadedTypeChecker } from "../runner/typecheck-thread.js";
import { warnOnStderr, writeErrorOnStderr, writeShown } from "./terminal-output.js";
import { SESSION_CODE_LIMIT_CHARS } from "../runner/limits.js";
import { SignalStop } from "./stop-signals.js";
import { StoppedBySignal } from "../runner/stop-reason.js";

/** Why the input was cut short: it held more code at once than a session keeps. */
const tooLong = (what: string): string =>
  `tacit repl: ${what} is longer than ${SESSION_CODE_LIMIT_CHARS / (1024 * 1024)} MiB, more code than a session keeps; ` +
  "the rest of the input was not read. Give it smaller snippets, or run a whole script with tacit run.\n";

/**
 * stdin as readline is given it, ended at a line longer than the session's code limit:
 * readline gathers a line in one string, so an endless one (`tacit repl < /dev/zero`, a large
 * file with no line breaks) ended tacit with V8's "Invalid string length" and Node's stack.
 */
function boundedLines(onTooLong: () => void): Transform {
  let lineLength = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const lastBreak = chunk.lastIndexOf(0x0a);
      lineLength = lastBreak === -1 ? lineLength + chunk.length : chunk.length - lastBreak - 1;
      if (lineLength > SESSION_CODE_LIMIT_CHARS) {
        onTooLong();
        this.push(null);
        process.stdin.unpipe(this);
        process.stdin.destroy();
        done();
        return;
      }
      done(null, chunk);
    },
  });
}

/**
 * An unfinished statement shorter than this is parsed again at each line of piped input (see
 * parseAgainAt): at most this many parses of at most this much text, a few ms.
 */
const PARSE_EACH_LINE_CHARS = 2 * 1024;

/** True while the text so far ends in the middle of a statement (an unclosed brace, say). */
function isUnfinished(code: string): boolean {
  const { errors } = parseSync("script.ts", code, { lang: "ts", sourceType: "module" });
  return errors.some((error) => (error.labels[0]?.start ?? 0) >= code.trimEnd().length);
}

export async function repl(config: RunnerConfig): Promise<number> {
  const interactive = process.stdin.isTTY === true;
  const session = new ReplSession(config);
  // The server's checker: kept warm between lines, each checked apart from the ones before it
  // where that gives the same verdict (a tsc process per line took about 170 ms a line).
  const checker = new ThreadedTypeChecker(config.executionTimeoutMs, config.memoryLimitMb);
  if (interactive && config.typeCheck) checker.prestart();
  // Approvals are asked on the terminal (readline is paused while a snippet runs).
  // readline keeps an interactive terminal in raw mode, and the asker must leave it so.
  const oversight = await createOversight(config, process.cwd(), interactive ? rawTerminalAsker : terminalAsker);
  oversight.audit?.append({ type: "session-started", session: session.id });
  const recorder = config.recordPath ? new (await import("../runner/recorder.js")).Recorder(config.recordPath) : null;
  let cutShort: string | null = null;
  const input = interactive ? process.stdin : process.stdin.pipe(boundedLines(() => (cutShort = tooLong("a line of the input"))));
  const lines = createInterface({ input, output: process.stdout, terminal: interactive, historySize: 1000 });
  // A stop signal ends the snippet under way (its session ends: its sandbox, a command it runs, an
  // open question) and the repl, which logs how they ended before it exits (see stop-signals.ts).
  const stop = new SignalStop((signal) => {
    void session.end(new StoppedBySignal(signal).text);
    lines.close();
  });
  const prompt = (more: boolean): void => {
    if (!interactive) return;
    lines.setPrompt(more ? "... " : "tacit> ");
    lines.prompt();
  };
  if (interactive) process.stdout.write("tacit repl: TypeScript against the tacit API (tacit interface). .exit or Ctrl-D to leave.\n");
  prompt(false);
  const run = async (code: string): Promise<void> => {
    const result = await session.execute(code, { oversight, typeChecker: (text, snippet) => checker.check(text, snippet) });
    recorder?.append({ kind: "repl", sessionId: session.id, code, result });
    writeShown(process.stdout, result.stdout);
    for (const warning of result.warnings) warnOnStderr(warning);
    if (result.error) writeErrorOnStderr(result.outcome, result.error);
  };
  let pending = "";
  /**
   * Piped input: the length the unfinished text must reach before it is parsed again. Each line
   * of an unfinished statement parsed all of it again, so a large paste with an early unclosed
   * brace took time quadratic in its length (3 M lines: minutes); past PARSE_EACH_LINE_CHARS it
   * is parsed again once it has doubled (and at the end), and what is complete by then runs as
   * one snippet. Below that, and for a person typing, each line is parsed: a program that drives
   * the repl through a pipe sends a statement over two lines (`println(` and `42)`) and waits for
   * its answer, which never came while the text waited to double.
   */
  let parseAgainAt = 0;
  for await (const line of lines) {
    // A line cut at the limit is not run: readline hands over what it held when its input ended.
    if (cutShort !== null) break;
    if (pending === "" && line.trim() === ".exit") break;
    // Blank lines between statements are skipped (only `line` is trimmed: trimming all that is
    // pending, at every line, was quadratic too).
    if (pending === "" && line.trim() === "") {
      prompt(false);
      continue;
    }
    pending = pending === "" ? line : `${pending}\n${line}`;
    if (pending.length > SESSION_CODE_LIMIT_CHARS) {
      cutShort = tooLong("an unfinished statement");
      break;
    }
    if (pending.length < parseAgainAt) continue;
    if (isUnfinished(pending)) {
      parseAgainAt = interactive || pending.length < PARSE_EACH_LINE_CHARS ? 0 : pending.length * 2;
      prompt(true);
      continue;
    }
    const code = pending;
    pending = "";
    parseAgainAt = 0;
    lines.pause();
    await run(code);
    if (stop.signalled !== null) break;
    lines.resume();
    prompt(false);
  }
  // What the input ended in the middle of is run too, not dropped: its syntax error says what is missing.
  if (cutShort === null && stop.signalled === null && pending.trim() !== "") await run(pending);
  lines.close();
  checker.close();
  await session.close();
  stop.release();
  oversight.audit?.append({ type: "session-ended", session: session.id, reason: stop.signalled === null ? "the repl ended" : `the repl was stopped by ${stop.signalled}` });
  oversight.audit?.close();
  if (stop.signalled !== null) return stop.exitCode(0);
  if (cutShort !== null) {
    process.stderr.write(cutShort);
    return 2;
  }
  return 0;
}
