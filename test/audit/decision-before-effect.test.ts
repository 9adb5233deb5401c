// The policy's decision on an action with an effect is in the audit log file before the effect
// happens, through the real CLI. Issue 6: a crash loses at most an unsigned tail, so a log must
// never end with an effect's request and no decision although the effect happened. Before, the
// gate logged the policy's "allow" once the monitor had carried the action out (the checks and
// the effect were one call): a tacit killed between a write and that line left a log whose last
// line said "requested", and a file written.
//
// Each effect is watched where it happens, and the log read there, as it is in the file:
//   - a command reads the log itself while it runs (cat);
//   - the HTTP server and the model read it when the request arrives (tacit waits for the answer);
//   - a file action (write, append, mkdir, delete, writeClassified) is seen in tacit's own process
//     by a preload (NODE_OPTIONS=--require) that, at the system call that creates, changes or
//     removes a file named "observed…", copies the log as it is then; it only observes (the call
//     is made as it would be), or, told to, acts as an attacker would at that moment: kills tacit
//     with SIGKILL right after a write, makes the file's name a hard link to a file elsewhere just
//     before it is opened, or appends a line of its own to the log right after a request.

import { existsSync, linkSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, unchecked } from "../helpers.js";
import { startServer, type TestServer } from "../net/fixtures.js";
import { auditHome, type Line, readLines, workAndLog } from "./fixtures.js";
import { CLASSIFIED_PRINTED_NOWHERE } from "../../runner/monitor.js";

/** The observer tacit's process loads (see the top of this file). */
const OBSERVER = `"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { isMainThread } = require("node:worker_threads");
const LOG = process.env.TACIT_TEST_AUDIT_LOG;
const REPORT = process.env.TACIT_TEST_EFFECT_REPORT;
const KILL_AFTER = process.env.TACIT_TEST_KILL_AFTER_WRITING || null;
const SWAP = process.env.TACIT_TEST_SWAP_AT_OPEN ? JSON.parse(process.env.TACIT_TEST_SWAP_AT_OPEN) : null;
const APPEND_AFTER_REQUEST = process.env.TACIT_TEST_APPEND_AFTER_REQUEST || null;
if (isMainThread && LOG && REPORT) {
  const { openSync, closeSync, mkdirSync, unlinkSync, rmdirSync, linkSync, writeSync, readFileSync, appendFileSync, existsSync } = fs;
  // Another process's line, appended to the log right after tacit wrote the request of an action of that kind.
  if (APPEND_AFTER_REQUEST !== null) {
    const request = '"kind":' + JSON.stringify(APPEND_AFTER_REQUEST) + ',';
    let appended = false;
    fs.writeSync = function (fd, buffer, ...rest) {
      const written = writeSync.call(this, fd, buffer, ...rest);
      const text = Buffer.isBuffer(buffer) ? buffer.toString("utf8") : String(buffer);
      if (!appended && text.includes('"type":"action-requested"') && text.includes(request)) {
        appended = true;
        appendFileSync(LOG, '{"forged":"a line tacit did not write"}\\n');
      }
      return written;
    };
  }
  const observed = (target) => typeof target === "string" && path.basename(target).includes("observed");
  const snapshot = (call, target) => {
    const log = existsSync(LOG) ? readFileSync(LOG, "utf8") : "";
    appendFileSync(REPORT, JSON.stringify({ call, name: path.basename(target), log }) + "\\n");
  };
  const written = new Map();
  fs.openSync = function (target, flags, ...rest) {
    const creates = typeof flags === "number" && (flags & fs.constants.O_CREAT) !== 0 && observed(target);
    if (creates) snapshot("open", target);
    // An attacker's swap at the last moment: the name made a hard link to a file elsewhere.
    if (creates && SWAP !== null && path.basename(target) === SWAP.name) {
      unlinkSync(target);
      linkSync(SWAP.linkTo, target);
    }
    const fd = openSync.call(this, target, flags, ...rest);
    if (creates) written.set(fd, path.basename(target));
    return fd;
  };
  fs.closeSync = function (fd) {
    const name = written.get(fd);
    written.delete(fd);
    closeSync.call(this, fd);
    if (name !== undefined && name === KILL_AFTER) process.kill(process.pid, "SIGKILL");
  };
  fs.mkdirSync = function (target, ...rest) {
    if (observed(target)) snapshot("mkdir", target);
    return mkdirSync.call(this, target, ...rest);
  };
  fs.unlinkSync = function (target) {
    if (observed(target)) snapshot("unlink", target);
    return unlinkSync.call(this, target);
  };
  fs.rmdirSync = function (target, ...rest) {
    if (observed(target)) snapshot("rmdir", target);
    return rmdirSync.call(this, target, ...rest);
  };
}
`;

/** A run's environment with the observer loaded: the log it reads, where it reports, and what else it is told to do. */
function observedEnv(ctx: ReturnType<typeof auditHome>, log: string, told: Record<string, string> = {}): Record<string, string> {
  const preload = path.join(ctx.dir, "observer.cjs");
  writeFileSync(preload, OBSERVER);
  return { ...ctx.env, NODE_OPTIONS: `--require ${preload}`, TACIT_TEST_AUDIT_LOG: log, TACIT_TEST_EFFECT_REPORT: reportOf(ctx), ...told };
}

const reportOf = (ctx: ReturnType<typeof auditHome>): string => path.join(ctx.dir, "effects.jsonl");

/** What a log holds for the first action of `kind` after its request: each decision (and its reason), then its result. */
function loggedAfterRequest(lines: Line[], kind: string): unknown[][] {
  const request = lines.find((line) => line.event.type === "action-requested" && line.event.kind === kind);
  expect(request, kind).toBeDefined();
  return lines
    .filter((line) => line.event.action === request!.event.action && line.event.type !== "action-requested")
    .map(({ event }) => (event.type === "decision" ? [event.decision, event.reason] : [event.type, event.ok]));
}

/** The lines of a log as it was read at some moment (its text). */
const linesOf = (text: string): Line[] => text.trimEnd().split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Line);

/** The action last requested in `lines` (the one under way, in a run whose actions come one at a time), and its decisions there. */
function underWay(lines: Line[]): { kind: unknown; action: unknown; decisions: unknown[] } {
  const request = lines.findLast((line) => line.event.type === "action-requested");
  expect(request, "no action requested yet").toBeDefined();
  const { action, kind } = request!.event;
  const decisions = lines.filter((line) => line.event.type === "decision" && line.event.action === action).map((line) => line.event.decision);
  return { kind, action, decisions };
}

/** What the observer saw: each effect on an "observed" file, with the log as it was in the file just before it. */
function observations(report: string): Array<{ call: string; name: string; lines: Line[] }> {
  if (!existsSync(report)) return [];
  return readFileSync(report, "utf8").trimEnd().split("\n").map((text) => {
    const seen = JSON.parse(text) as { call: string; name: string; log: string };
    return { call: seen.call, name: seen.name, lines: linesOf(seen.log) };
  });
}

describe("the decision on an action with an effect, in the log file before the effect", () => {
  let ctx: ReturnType<typeof auditHome>;
  let work: string;
  let log: string;
  let server: TestServer;
  let model: TestServer;
  /** The log as the server and the model read it when each request arrived. */
  const atServer: Line[][] = [];
  const atModel: Array<{ question: string; lines: Line[] }> = [];
  let stdout: string;

  beforeAll(async () => {
    ctx = auditHome();
    ({ work, log } = workAndLog(ctx.dir));
    writeFileSync(path.join(work, "observed-gone.txt"), "to be deleted\n");
    server = await startServer((_request, response) => {
      atServer.push(linesOf(readFileSync(log, "utf8")));
      response.end("answered");
    });
    model = await startServer((request, response) => {
      const { messages } = JSON.parse(request.body) as { messages: Array<{ content: string }> };
      atModel.push({ question: messages.at(-1)!.content, lines: linesOf(readFileSync(log, "utf8")) });
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ choices: [{ message: { content: "the answer" } }] }));
    });
    const script = `
requestFileSystem(".", (fs) => {
  fs.access("observed-dir/observed-sub").mkdir();
  fs.access("observed-dir/observed-sub/observed-notes.txt").write("written");
  fs.access("observed-dir/observed-sub/observed-notes.txt").append(" and appended");
  fs.access("observed-gone.txt").delete();
  fs.access(".env.observed").writeClassified(classify("a secret"));
});
requestNetwork(["127.0.0.1:*"], (net) => println(net.httpGet("${server.origin}/upload?data=1")));
println(chat("a plain question"));
println(chat(classify("a classified question")));
requestExecPermission(["cat"], (proc) => {
  // The log as the command found it while it ran: its last three lines.
  const seen = proc.execOutput("cat", [${JSON.stringify(log)}]).trimEnd().split("\\n").slice(-3).map((line) => JSON.parse(line));
  println(JSON.stringify(seen));
});
`;
    const llm = ["--llm-base-url", `${model.origin}/v1`, "--llm-api-key", "sk-test-decision-before-effect", "--llm-model", "m"];
    const args = unchecked(["run", "--audit-log", log, "--command-permissions", "cat", "--network-permissions", `127.0.0.1:${server.port}`, ...llm, "-"]);
    const run = await runCli(args, { cwd: work, env: observedEnv(ctx, log), input: script });
    // The script prints a Classified value with no secure output set: tacit says so, once.
    expect(run.stderr).toBe(`tacit: warning: ${CLASSIFIED_PRINTED_NOWHERE}\n`);
    expect(run.code).toBe(0);
    stdout = run.stdout;
  }, 60_000);
  afterAll(async () => {
    await server.close();
    await model.close();
    ctx.cleanup();
  });

  it("has a file action's decision (allow) on file when the file is created, changed or removed", () => {
    expect(readFileSync(path.join(work, "observed-dir", "observed-sub", "observed-notes.txt"), "utf8")).toBe("written and appended");
    expect(existsSync(path.join(work, "observed-gone.txt"))).toBe(false);
    const seen = observations(reportOf(ctx));
    expect(seen.map(({ call, name }) => `${call} ${name}`)).toEqual([
      "mkdir observed-dir",
      "mkdir observed-sub",
      "open observed-notes.txt",
      "open observed-notes.txt",
      "unlink observed-gone.txt",
      "open .env.observed",
    ]);
    const kinds = ["FsMkdir", "FsMkdir", "FsWrite", "FsWrite", "FsDelete", "FsWriteClassified"];
    seen.forEach(({ call, name, lines }, i) => {
      expect(underWay(lines), `${call} ${name}`).toMatchObject({ kind: kinds[i], decisions: ["allow"] });
    });
  });

  it("has a command's decision on file while the command runs", () => {
    const seen = JSON.parse(stdout.trimEnd().split("\n").at(-1)!) as Line[];
    expect(seen.map((line) => line.event.type).slice(-2)).toEqual(["action-requested", "decision"]);
    expect(underWay(seen)).toMatchObject({ kind: "Exec", decisions: ["allow"] });
  });

  it("has a request's decision on file when the server receives it, and a chat's when the model is asked", () => {
    expect(atServer).toHaveLength(1);
    expect(underWay(atServer[0]!)).toMatchObject({ kind: "HttpRequest", decisions: ["allow"] });
    expect(atModel.map(({ question }) => question)).toEqual(["a plain question", "a classified question"]);
    expect(underWay(atModel[0]!.lines)).toMatchObject({ kind: "Chat", decisions: ["allow"] });
    // The classified chat is asked once its value is computed, after the reply: its own request is found by kind.
    const asked = atModel[1]!.lines;
    const request = asked.findLast((line) => line.event.type === "action-requested" && line.event.kind === "ChatClassified");
    expect(request).toBeDefined();
    expect(asked.filter((line) => line.event.type === "decision" && line.event.action === request!.event.action).map((line) => line.event.decision)).toEqual(["allow"]);
  });

  it("logs each action's one decision, in the final log too", () => {
    const lines = readLines(log);
    const requested = lines.filter((line) => line.event.type === "action-requested").map((line) => line.event.action);
    for (const action of requested) {
      expect(lines.filter((line) => line.event.type === "decision" && line.event.action === action), `action ${String(action)}`).toHaveLength(1);
    }
  });
});

describe("a tacit killed right after a write", () => {
  it("leaves a log that holds the write's request and its decision, not a request alone", async () => {
    const ctx = auditHome();
    try {
      const { work, log } = workAndLog(ctx.dir);
      const env = observedEnv(ctx, log, { TACIT_TEST_KILL_AFTER_WRITING: "observed-deploy.conf" });
      const script = 'requestFileSystem(".", (fs) => { fs.access("observed-deploy.conf").write("listen 0.0.0.0\\n"); fs.access("after.txt").write("never"); });\n';
      const run = await runCli(unchecked(["run", "--audit-log", log, "-"]), { cwd: work, env, input: script });
      expect(run.code).toBeNull();
      // The write happened, and tacit died before the next action.
      expect(readFileSync(path.join(work, "observed-deploy.conf"), "utf8")).toBe("listen 0.0.0.0\n");
      expect(existsSync(path.join(work, "after.txt"))).toBe(false);
      const lines = readLines(log);
      expect(underWay(lines)).toMatchObject({ kind: "FsWrite", decisions: ["allow"] });
      expect(lines.at(-1)!.event).toMatchObject({ type: "decision", decision: "allow", via: "policy" });
    } finally {
      ctx.cleanup();
    }
  }, 30_000);
});

describe("an action refused by a check made before its effect, and one refused at the moment of it", () => {
  it("is refused, logged as denied with the refusal; a refusal that only the effect can find is logged after the allow", async () => {
    const ctx = auditHome();
    const server = await startServer();
    try {
      const { work, log } = workAndLog(ctx.dir);
      // A file outside the scope, and a name for it inside: writing the name would change it.
      const canary = path.join(ctx.dir, "canary.txt");
      writeFileSync(canary, "CANARY-outside-the-scope\n");
      linkSync(canary, path.join(work, "linked.txt"));
      const script =
        'requestFileSystem(".", (fs) => {\n' +
        '  try { fs.access("linked.txt").write("overwritten"); } catch (error) { println(String(error)); }\n' +
        "});\n" +
        // A name the permission matches by a glob, which resolves to loopback when connecting.
        `requestNetwork(["local*:${server.port}"], (net) => {\n` +
        `  try { net.httpGet("http://localhost:${server.port}/"); } catch (error) { println(String(error)); }\n` +
        "});\n";
      const run = await runCli(unchecked(["run", "--audit-log", log, "--network-permissions", `local*:${server.port}`, "-"]), { cwd: work, env: ctx.env, input: script });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/SecurityError: .*linked\.txt: refused: the file has 2 hard links/);
      expect(run.stdout).toMatch(/SecurityError: localhost resolves to 127\.0\.0\.1/);
      expect(readFileSync(canary, "utf8")).toBe("CANARY-outside-the-scope\n");
      expect(server.received).toEqual([]);
      expect(server.connections).toBe(0);
      const lines = readLines(log);
      // Its links are looked at before the open (and again on what it opened): one decision, as for any refusal by a check.
      expect(loggedAfterRequest(lines, "FsWrite")).toEqual([
        ["deny", expect.stringMatching(/linked\.txt: refused: the file has 2 hard links/)],
        ["action-result", false],
      ]);
      // The address a name leads to is known only when connecting (checked in the connection's own lookup):
      // decided "allow" by every check before, then refused there, nothing sent.
      expect(loggedAfterRequest(lines, "HttpRequest")).toEqual([
        ["allow", null],
        ["deny", expect.stringMatching(/^localhost resolves to 127\.0\.0\.1/)],
        ["action-result", false],
      ]);
    } finally {
      await server.close();
      ctx.cleanup();
    }
  }, 30_000);
});

describe("a file swapped for a hard link to one outside the scope between the checks and the open", () => {
  it("is refused at the open (the check on what was opened stays), nothing written, and logged as allowed, then denied", async () => {
    const ctx = auditHome();
    try {
      const { work, log } = workAndLog(ctx.dir);
      const canary = path.join(ctx.dir, "canary.txt");
      writeFileSync(canary, "CANARY-outside-the-scope\n");
      writeFileSync(path.join(work, "observed-swapped.txt"), "one link when checked\n");
      const env = observedEnv(ctx, log, { TACIT_TEST_SWAP_AT_OPEN: JSON.stringify({ name: "observed-swapped.txt", linkTo: canary }) });
      const script = 'requestFileSystem(".", (fs) => { try { fs.access("observed-swapped.txt").write("overwritten"); } catch (error) { println(String(error)); } });\n';
      const run = await runCli(unchecked(["run", "--audit-log", log, "-"]), { cwd: work, env, input: script });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/SecurityError: .*observed-swapped\.txt: refused: the file has 2 hard links/);
      expect(readFileSync(canary, "utf8")).toBe("CANARY-outside-the-scope\n");
      // Decided "allow" while the name had one link, then refused at the open.
      expect(loggedAfterRequest(readLines(log), "FsWrite")).toEqual([
        ["allow", null],
        ["deny", expect.stringMatching(/observed-swapped\.txt: refused: the file has 2 hard links/)],
        ["action-result", false],
      ]);
    } finally {
      ctx.cleanup();
    }
  }, 30_000);
});

describe("a log changed under its writer between an action's request and its decision", () => {
  it("keeps the action from happening: its decision cannot be written before it, and the run fails naming the log", async () => {
    const ctx = auditHome();
    try {
      const { work, log } = workAndLog(ctx.dir);
      const env = observedEnv(ctx, log, { TACIT_TEST_APPEND_AFTER_REQUEST: "FsWrite" });
      const script = 'requestFileSystem(".", (fs) => { fs.access("observed-never.txt").write("written"); });\n';
      const run = await runCli(unchecked(["run", "--audit-log", log, "-"]), { cwd: work, env, input: script });
      expect(existsSync(path.join(work, "observed-never.txt"))).toBe(false);
      expect(run.code).not.toBe(0);
      expect(run.stdout + run.stderr).toMatch(/the audit log .* grew by \d+ bytes that this tacit did not write/);
    } finally {
      ctx.cleanup();
    }
  }, 30_000);
});
