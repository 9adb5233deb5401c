// --record DIR: every executed script or snippet, appended as one JSON line with its session,
// result and timing (TACIT's --record). What is recorded is what the agent saw: classified
// values appear only as Classified(***), secret header values never.

import { appendFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import type { EvaluationResult } from "./evaluate.js";

export interface RecordEntry {
  kind: "run" | "execute_typescript" | "execute_in_session" | "repl";
  sessionId?: string;
  code: string;
  result: EvaluationResult;
}

export class Recorder {
  private readonly file: string;

  constructor(dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.file = path.join(dir, "tacit-record.jsonl");
  }

  append(entry: RecordEntry): void {
    const { outcome, exitCode, stdout, error, durationMs, truncated } = entry.result;
    const line = {
      at: new Date().toISOString(),
      kind: entry.kind,
      ...(entry.sessionId ? { sessionId: entry.sessionId } : {}),
      code: entry.code,
      outcome,
      exitCode,
      stdout,
      error,
      durationMs,
      truncated,
    };
    appendFileSync(this.file, JSON.stringify(line) + "\n", { mode: 0o600 });
  }
}
