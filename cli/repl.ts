// `tacit repl`: an interactive prompt over a REPL session, for people building or testing
// policies. Line editing and history come from node:readline; input continues over several
// lines while what was typed is an unfinished statement.

import { createInterface } from "node:readline";
import { parseSync } from "../runner/parser.js";
import type { RunnerConfig } from "../runner/config.js";
import { ReplSession } from "../runner/session.js";
import { rawTerminalAsker, terminalAsker } from "../runner/approval/askers.js";
import { createOversight } from "../runner/approval/oversight.js";
import { ThreadedTypeChecker } from "../runner/typecheck-thread.js";
import { writeShown } from "./terminal-output.js";

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
  const checker = new ThreadedTypeChecker(config.executionTimeoutMs);
  if (interactive && config.typeCheck) checker.prestart();
  // Approvals are asked on the terminal (readline is paused while a snippet runs).
  // readline keeps an interactive terminal in raw mode, and the asker must leave it so.
  const oversight = await createOversight(config, process.cwd(), interactive ? rawTerminalAsker : terminalAsker);
  oversight.audit?.append({ type: "session-started", session: session.id });
  const recorder = config.recordPath ? new (await import("../runner/recorder.js")).Recorder(config.recordPath) : null;
  const lines = createInterface({ input: process.stdin, output: process.stdout, terminal: interactive, historySize: 1000 });
  const prompt = (more: boolean): void => {
    if (!interactive) return;
    lines.setPrompt(more ? "... " : "tacit> ");
    lines.prompt();
  };
  if (interactive) process.stdout.write("tacit repl: TypeScript against the tacit API (tacit interface). .exit or Ctrl-D to leave.\n");
  prompt(false);
  let pending = "";
  for await (const line of lines) {
    if (pending === "" && line.trim() === ".exit") break;
    pending = pending === "" ? line : `${pending}\n${line}`;
    if (pending.trim() === "") {
      pending = "";
      prompt(false);
      continue;
    }
    if (isUnfinished(pending)) {
      prompt(true);
      continue;
    }
    const code = pending;
    pending = "";
    lines.pause();
    const result = await session.execute(code, { oversight, typeChecker: (text, snippet) => checker.check(text, snippet) });
    recorder?.append({ kind: "repl", sessionId: session.id, code, result });
    writeShown(process.stdout, result.stdout);
    if (result.error) writeShown(process.stderr, result.error.endsWith("\n") ? result.error : `${result.error}\n`);
    lines.resume();
    prompt(false);
  }
  lines.close();
  checker.close();
  await session.close();
  oversight.audit?.append({ type: "session-ended", session: session.id, reason: "the repl ended" });
  oversight.audit?.close();
  return 0;
}
