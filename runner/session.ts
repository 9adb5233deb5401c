// REPL sessions: snippets that build on each other. Each snippet runs in a fresh sandbox as
// the last part of one module made of the session's earlier successful snippets and itself,
// so bindings, reassignments and closures behave as in one program. The earlier snippets'
// requests are answered from a recording of their first run — nothing is performed twice —
// and their output is not shown again. A snippet that fails, times out or is cancelled adds
// nothing, so the session keeps the bindings of its successful snippets. Classified values
// (and the secure sink) live with the session.

import { parseSync } from "oxc-parser";
import { ECHO_GLOBAL } from "../library/protocol.js";
import { ClassifiedStore } from "./classified/store.js";
import { PureEvaluator } from "./classified/pure-evaluator.js";
import type { TypeChecker } from "./checks.js";
import type { Oversight } from "./approval/gate.js";
import type { RunnerConfig } from "./config.js";
import { evaluate, type EvaluationResult, type RecordedExchange, type SessionState } from "./evaluate.js";
import { randomToken, randomUint32 } from "./random-token.js";
import type { SandboxProcess } from "./sandbox-process.js";
import { SecureSink } from "./secure-sink.js";
import { lineStarts } from "./source-position.js";

const DISPLAY_NAME = "script.ts";

type Edit = { at: number; length: number; text: string };

/**
 * The edits that pass a snippet's final expression statement to the echo. Replayed snippets
 * keep theirs: the echo's output is part of what their recording answers.
 */
function echoEdits(snippet: string, offset: number): Edit[] {
  const { program, errors } = parseSync(DISPLAY_NAME, snippet, { lang: "ts", sourceType: "module", astType: "ts" });
  if (errors.length > 0) return []; // The checks will report it.
  const last = program.body[program.body.length - 1] as unknown as { type: string; expression?: { start: number; end: number } } | undefined;
  if (last?.type !== "ExpressionStatement" || !last.expression) return [];
  return [
    { at: offset + last.expression.start, length: 0, text: `${ECHO_GLOBAL}((` },
    { at: offset + last.expression.end, length: 0, text: "))" },
  ];
}

/** Positions in messages refer to the whole module; the agent sees its snippet's lines. */
function shiftLines(text: string | null, lines: number): string | null {
  if (text === null || lines === 0) return text;
  return text.replace(new RegExp(`${DISPLAY_NAME.replace(".", "\\.")}:(\\d+):(\\d+)`, "g"), (whole, line: string, column: string) =>
    Number(line) > lines ? `${DISPLAY_NAME}:${Number(line) - lines}:${column}` : whole,
  );
}

export class ReplSession {
  readonly id = `s${randomToken(12)}`;
  /** Every run of the session's snippets draws the same Math.random numbers (see StartFrame). */
  private readonly randomSeed = randomUint32();
  readonly createdAt = Date.now();
  lastUsed = Date.now();
  private readonly snippets: Array<{ code: string; echo: Edit[] }> = [];
  private readonly recording: RecordedExchange[] = [];
  private readonly state: SessionState;
  private busy = false;

  constructor(config: RunnerConfig) {
    const pure = new PureEvaluator();
    const sink = config.library.secureOutput ? new SecureSink(config.library.secureOutput) : null;
    const classified = new ClassifiedStore(pure, (reason) => sink?.append(`[tacit] ${reason}\n`));
    this.state = { classified, pure, sink };
  }

  get snippetCount(): number {
    return this.snippets.length;
  }

  async execute(
    code: string,
    config: RunnerConfig,
    extra: { signal?: AbortSignal; prestarted?: SandboxProcess; typeChecker?: TypeChecker; oversight?: Oversight } = {},
  ): Promise<EvaluationResult> {
    if (this.busy) throw new Error("this session is already running a snippet; wait for it, or use another session");
    this.busy = true;
    this.lastUsed = Date.now();
    try {
      const prefix = this.snippets.map((snippet) => snippet.code).join("\n");
      const combined = prefix === "" ? code : `${prefix}\n${code}`;
      const prefixLines = prefix === "" ? 0 : lineStarts(prefix).length;
      const echo = echoEdits(code, 0);
      const edits: Edit[] = [];
      let at = 0;
      for (const snippet of [...this.snippets, { code, echo }]) {
        for (const edit of snippet.echo) edits.push({ ...edit, at: edit.at + at });
        at += snippet.code.length + 1;
      }
      const record: RecordedExchange[] = [];
      const result = await evaluate({
        code: combined,
        displayName: DISPLAY_NAME,
        config,
        input: { kind: "unavailable", reason: "readInput(): a session snippet has no piped input; put the data in the snippet." },
        session: { id: this.id, state: this.state, replay: this.recording, record, extraEdits: edits, randomSeed: this.randomSeed },
        ...(extra.signal ? { signal: extra.signal } : {}),
        ...(extra.prestarted ? { prestarted: extra.prestarted } : {}),
        ...(extra.typeChecker ? { typeChecker: extra.typeChecker } : {}),
        ...(extra.oversight ? { oversight: extra.oversight } : {}),
      });
      if (result.exitCode === 0) {
        this.snippets.push({ code, echo });
        this.recording.push(...record);
      }
      return { ...result, error: shiftLines(result.error, prefixLines) };
    } finally {
      this.busy = false;
      this.lastUsed = Date.now();
    }
  }

  async close(): Promise<void> {
    await this.state.pure.close();
    await this.state.sink?.flush().catch(() => undefined);
    this.state.sink?.close();
  }
}
