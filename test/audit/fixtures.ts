// Shared by the audit tests: realistic logs written with the real AuditLog, the edits an
// attacker would make to them, and `tacit audit verify` through the real CLI.

import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { publicKeyOf, signBytes, toHex } from "../../runner/audit/ed25519.js";
import type { AuditEvent } from "../../runner/audit/events.js";
import { AuditLog, type AuditLogOptions } from "../../runner/audit/log.js";
import { canonicalJson } from "../../runner/audit/digest.js";
import { type AuditLine, chainOf, eventHash, headMessage, type HeadEvent, lineText, type LoggedEvent } from "../../runner/audit/line.js";
import type { VerifyReport } from "../../runner/audit/verify.js";
import { expect } from "vitest";
import { type CliResult, connectServe, repoRoot, runCli, tempDirWithHome } from "../helpers.js";
import { rawClient } from "../mcp/raw-client.js";

/**
 * The layout the tests of real runs share, in a test's directory `dir`: a working directory (the
 * run's allowed root, made here) and the audit log's path beside it, outside the root, as a log
 * should be (in `logDir` under `dir`, if given, which tacit makes).
 */
export function workAndLog(dir: string, logDir = ""): { work: string; log: string } {
  const work = path.join(dir, "work");
  mkdirSync(work, { recursive: true });
  return { work, log: path.join(dir, logDir, "audit.jsonl") };
}

/** A directory for logs plus a TACIT_HOME of its own, not made yet (and its key file's path). */
export function auditHome(): { home: string; keyFile: string; dir: string; env: Record<string, string>; cleanup: () => void } {
  const { dir, home, env, cleanup } = tempDirWithHome("tacit-audit-", { typeCheckCache: true });
  return { home, keyFile: path.join(home, "audit-key.json"), dir, env, cleanup };
}

/**
 * auditHome, with a working directory `work` (the runs' allowed root) holding script.ts, which
 * prints "audited", and the log's path outside it, in `dir`/logs (as the README advises).
 */
export function auditedWork(): ReturnType<typeof auditHome> & { work: string; log: string } {
  const ctx = auditHome();
  const work = path.join(ctx.dir, "work");
  mkdirSync(work);
  writeFileSync(path.join(work, "script.ts"), 'println("audited");\n');
  return { ...ctx, work, log: path.join(ctx.dir, "logs", "audit.jsonl") };
}

/** A fresh home (auditHome) and a clean log of two evaluations in it: 22 lines, heads at lines 11 and 22. */
export function cleanLog(): { ctx: ReturnType<typeof auditHome>; original: string; lines: Line[] } {
  const ctx = auditHome();
  const original = path.join(ctx.dir, "audit.jsonl");
  writeLog(original, ctx.keyFile, 2);
  return { ctx, original, lines: readLines(original) };
}

const digest = (seed: string) => `sha256:${Buffer.from(seed.padEnd(32, ".")).toString("hex").slice(0, 64)}`;

/** What one `tacit run` of a script that reads a file, runs git and fetches a URL records. */
export function evaluationEvents(evaluation: string): AuditEvent[] {
  const actions: { kind: string; pattern: string; tier: "allow" | "approve-once" | "always-ask"; decision: "allow" | "deny" | "asked" }[] = [
    { kind: "FsRead", pattern: "fs.read /work/app/README.md", tier: "allow", decision: "allow" },
    { kind: "Exec", pattern: "exec git status", tier: "approve-once", decision: "asked" },
    { kind: "HttpRequest", pattern: "http GET api.example.com:443", tier: "allow", decision: "deny" },
  ];
  const events: AuditEvent[] = [
    {
      type: "evaluation-started",
      evaluation,
      session: null,
      displayName: "script.ts",
      codeDigest: digest(`code-${evaluation}`),
      policyDigest: digest("policy"),
    },
  ];
  actions.forEach((a, index) => {
    const action = index + 1;
    events.push({ type: "action-requested", evaluation, action, kind: a.kind, pattern: a.pattern, tier: a.tier });
    events.push({
      type: "decision",
      evaluation,
      action,
      decision: a.decision,
      answer: a.decision === "asked" ? "yes" : null,
      via: a.decision === "asked" ? "terminal" : "policy",
      reason: a.decision === "deny" ? "api.example.com is not in networkPermissions" : null,
    });
    if (a.decision !== "deny") {
      events.push({ type: "action-result", evaluation, action, ok: true, digest: digest(`result-${action}`), size: 120 * action, durationMs: 3 });
    }
  });
  events.push({ type: "evaluation-ended", evaluation, outcome: "ok", exitCode: 0, durationMs: 412 });
  return events;
}

/**
 * Writes `evaluations` evaluations, signing a head at the end of each (as the runner does),
 * and closes the log. Each evaluation is 11 lines: 10 events, then a head. In the first:
 * 1 started, 2–4 file read (requested, decision, result), 5–7 git (asked, yes), 8–9 HTTP
 * (denied), 10 ended, 11 head.
 */
export function writeLog(file: string, keyFile: string, evaluations = 2, options: AuditLogOptions = {}): void {
  const log = AuditLog.open(file, { keyFile, ...options });
  try {
    for (let i = 1; i <= evaluations; i++) {
      for (const event of evaluationEvents(`eval-${i}`)) log.append(event);
      log.signHead();
    }
  } finally {
    log.close();
  }
}

/**
 * A real crash: a separate process (the built writer, as `tacit run` uses it) appends one
 * evaluation's events to the log, writes them, and is killed (SIGKILL) before it signs them,
 * so neither a head nor the record of one is written for them.
 */
export function crashWhileWriting(file: string, keyFile: string, evaluation: string): void {
  const writer = pathToFileURL(path.join(repoRoot, "dist", "runner", "audit", "log.js")).href;
  const script =
    `const { AuditLog } = await import(${JSON.stringify(writer)});\n` +
    `const [file, keyFile, events] = process.argv.slice(1);\n` +
    `const log = AuditLog.open(file, { keyFile });\n` +
    `for (const event of JSON.parse(events)) log.append(event);\n` +
    `log.flush();\n` +
    `process.kill(process.pid, "SIGKILL");\n`;
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script, file, keyFile, JSON.stringify(evaluationEvents(evaluation))], {
    encoding: "utf8",
  });
  if (child.signal !== "SIGKILL") throw new Error(`the crashing writer did not crash (exit ${child.status}): ${child.stderr}`);
}

export type Line = AuditLine<LoggedEvent & Record<string, unknown>>;

export function readLines(file: string): Line[] {
  return readFileSync(file, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line) as Line);
}

/** Writes lines in the writer's own form (as a careful forger would: verify refuses any other). */
export function writeLines(file: string, lines: Line[]): void {
  const text = (line: Line) => lineText(line.seq, line.time, canonicalJson(line.event), line.prev, line.hash, line.chain);
  writeFileSync(file, lines.map((line) => text(line) + "\n").join(""), { mode: 0o600 });
}

/** Writes a variant of a log (lines, or raw text) to `dir/name.jsonl`, owner-only; returns its path. */
export function writeVariant(dir: string, name: string, content: Line[] | string): string {
  const file = path.join(dir, `${name}.jsonl`);
  if (typeof content === "string") writeFileSync(file, content, { mode: 0o600 });
  else writeLines(file, content);
  return file;
}

/** Recomputes one line's hash and chain from its content and prev, as a careful forger would. */
export function rehash(line: Line): Line {
  const hash = eventHash(line.seq, line.time, line.event);
  return { ...line, hash, chain: chainOf(line.prev, hash) };
}

/**
 * Rewrites the chain from index `from` on: every prev, hash and chain recomputed, each head's
 * `signs` and `signedSeq` pointed at the new chain. Heads keep their old signature unless a
 * key to re-sign with is given.
 */
export function rechain(lines: Line[], from: number, resignWith?: Uint8Array): Line[] {
  const out = lines.slice(0, from);
  for (let i = from; i < lines.length; i++) {
    const before = out[i - 1];
    let line: Line = { ...lines[i]!, prev: before ? before.chain : "0".repeat(64) };
    if (line.event.type === "head") {
      const head = { ...(line.event as HeadEvent), signs: line.prev, signedSeq: line.seq - 1 };
      if (resignWith) {
        head.publicKey = toHex(publicKeyOf(resignWith));
        head.signature = toHex(signBytes(headMessage(head.signs, line.seq, line.time), resignWith));
      }
      line = { ...line, event: head as Line["event"] };
    }
    out.push(rehash(line));
  }
  return out;
}

export function newPrivateKey(): Uint8Array {
  return new Uint8Array(randomBytes(32));
}

export function publicKeyHex(keyFile: string): string {
  return (JSON.parse(readFileSync(keyFile, "utf8")) as { publicKey: string }).publicKey;
}

/** `tacit audit verify FILE --json …` through the CLI, its report parsed. */
export async function verifyJson(file: string, env: Record<string, string>, extra: string[] = []): Promise<{ result: CliResult; report: VerifyReport }> {
  const result = await runCli(["audit", "verify", file, "--json", ...extra], { env });
  let report: VerifyReport;
  try {
    report = JSON.parse(result.stdout) as VerifyReport;
  } catch {
    throw new Error(`tacit audit verify printed no JSON (exit ${result.code}): ${result.stdout}${result.stderr}`);
  }
  return { result, report };
}

/** The lines `tacit audit show --json` printed, each as it is in the file (its `lines`' entries). */
export function shownEntries<T = Line>(stdout: string): T[] {
  return (JSON.parse(stdout) as { lines: { entry: T }[] }).lines.map((line) => line.entry);
}

/** How tacit ends the stderr line of an audit log that failed. */
export const EXIT_2_SAID = "tacit exits 2: it could not write its audit log";

/** What the tests read of a raw client's answers. */
export interface ServeAnswer {
  id?: unknown;
  result?: { structuredContent?: { exitCode?: number } };
}

/**
 * A tacit serve with an audit log beside (not inside) its work directory, its stderr kept, spoken
 * to by a raw JSON-RPC client (its input can be ended, which the SDK's client does not let a test
 * do at a chosen moment); `cleanups` gets what ends it.
 */
export async function serveWithAuditLog(
  prefix: string,
  cleanups: Array<() => void>,
): Promise<{ client: ReturnType<typeof rawClient<ServeAnswer>>; work: string; log: string; stderr: () => string; exited: Promise<number | null> }> {
  const { dir, env, cleanup } = tempDirWithHome(prefix);
  cleanups.push(cleanup);
  const log = path.join(dir, "audit.jsonl");
  const work = path.join(dir, "work");
  mkdirSync(work);
  const client = rawClient<ServeAnswer>(["--no-check", "--audit-log", log], work, env);
  cleanups.push(() => client.close());
  let stderr = "";
  client.child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => client.child.once("exit", (code) => resolve(code)));
  await client.initialize();
  return { client, work, log, stderr: () => stderr, exited };
}

/**
 * A progress field of action results (requestProgress, commandProgress): a name from its
 * `vocabulary` wherever it is, on no result of an action of another kind than `kind`, and no
 * result holds `canary` (the script's text).
 */
export function expectProgressField(
  events: ReadonlyArray<Record<string, unknown>>,
  field: string,
  vocabulary: readonly string[],
  kind: string,
  canary: string,
): void {
  const results = events.filter((event) => event.type === "action-result");
  for (const event of results) {
    if (event[field] !== undefined) expect(vocabulary).toContain(event[field]);
    expect(JSON.stringify(event)).not.toContain(canary);
  }
  for (const other of events.filter((event) => event.type === "action-requested" && event.kind !== kind)) {
    const result = results.find((event) => event.evaluation === other.evaluation && event.action === other.action);
    expect(result).not.toHaveProperty(field);
  }
}

/** The log verifies with no warning, and `tacit audit show` has an action-result row holding each of `rows`. */
export async function expectVerifiedAndShown(log: string, env: Record<string, string>, rows: readonly string[]): Promise<void> {
  const { result, report } = await verifyJson(log, env);
  expect(result.code, result.stdout).toBe(0);
  expect(report.warnings).toEqual([]);
  const shown = await runCli(["audit", "show", log], { env });
  expect(shown.code, shown.stderr).toBe(0);
  const resultLines = shown.stdout.split("\n").filter((line) => line.includes("action-result"));
  for (const row of rows) expect(resultLines.some((line) => line.includes(row)), row).toBe(true);
}

/** What declinedInServe found: how often the person was asked, what the call said, and the asked action's decision and result. */
export interface DeclinedAction {
  asked: number;
  said: string;
  decision: Record<string, unknown> | undefined;
  result: Record<string, unknown> | undefined;
}

/**
 * `code` run by execute_typescript under a tacit serve with `config` (written beside `work`) and
 * the audit log `log`, whose client declines every question it is asked: the log's events for the
 * first action of `kind`.
 */
export async function declinedInServe(
  ctx: ReturnType<typeof auditHome>,
  { work, log }: { work: string; log: string },
  config: object,
  code: string,
  kind: string,
): Promise<DeclinedAction> {
  const configFile = path.join(ctx.dir, "tacit.json");
  writeFileSync(configFile, JSON.stringify(config));
  let asked = 0;
  const client = await connectServe(["--no-check", "--config", configFile, "--audit-log", log], work, {
    env: ctx.env,
    onElicit: () => {
      asked++;
      return { action: "decline" };
    },
  });
  let said: string;
  try {
    said = JSON.stringify((await client.callTool({ name: "execute_typescript", arguments: { code } })).content);
  } finally {
    await client.close();
  }
  const events = readLines(log).map((line) => line.event as Record<string, unknown>);
  const request = events.find((event) => event.type === "action-requested" && event.kind === kind)!;
  const of = (type: string) => events.find((event) => event.type === type && event.action === request.action);
  return { asked, said, decision: of("decision"), result: of("action-result") };
}
