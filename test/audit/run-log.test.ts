// The audit log of real runs: `tacit run --audit-log` with file, command and network actions
// (and a secret used in a header) verifies; every kind of tampering with that real log is
// caught on the right line; no classified canary or secret header value appears in it.
// `tacit serve` logs its sessions into the same kind of chain.

import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, tacitBin, unchecked } from "../helpers.js";
import { startServer, type TestServer } from "../net/fixtures.js";
import { writerLockFor } from "../../runner/audit/log.js";
import { auditHome, type Line, newPrivateKey, readLines, rechain, verifyJson, writeVariant, workAndLog } from "./fixtures.js";
import { CLASSIFIED_PRINTED_NOWHERE } from "../../runner/monitor.js";

const CANARY = "CANARY-7f3e9a1c-do-not-log";
const HEADER_SECRET = "hdr-secret-55ab0c";

const SCRIPT = (origin: string) => `
requestFileSystem(".", (fs) => {
  fs.access("notes.txt").write("hello from the script");
  println(fs.access("notes.txt").read());
  const env = fs.readClassified(".env");
  println("classified:", env);
  const token = env.map((text) => text.split("=")[1]!.trim());
  requestNetwork(["127.0.0.1:*"], (net) => {
    const answer = net.httpRequest("GET", "${origin}/echo", { secretHeaders: { authorization: token, "x-api-key": classify("${HEADER_SECRET}") } });
    println("status", answer.status);
  });
});
requestExecPermission(["echo"], (proc) => println(proc.execOutput("echo", ["hi", "there"]).trim()));
`;

describe("the audit log of a real tacit run", () => {
  let ctx: ReturnType<typeof auditHome>;
  let server: TestServer;
  let log: string;
  let lines: Line[];
  const variant = (name: string, content: Line[] | string): string => writeVariant(ctx.dir, name, content);
  const lineOf = (predicate: (line: Line) => boolean): number => lines.findIndex(predicate);

  beforeAll(async () => {
    ctx = auditHome();
    server = await startServer();
    writeFileSync(path.join(ctx.dir, ".env"), `TOKEN=${CANARY}\n`);
    writeFileSync(path.join(ctx.dir, "script.ts"), SCRIPT(server.origin));
    log = path.join(ctx.dir, "audit.jsonl");
    const args = ["run", "--audit-log", log, "--command-permissions", "echo", "--network-permissions", `127.0.0.1:${server.port}`, "script.ts"];
    const run = await runCli(args, { cwd: ctx.dir, env: ctx.env });
    // The log lies inside the allowed root (the working directory): tacit says so, and refuses
    // scripts access to it (test/files/protected.test.ts); and the script prints a Classified
    // value with no secure output set, which tacit says once (test/files/classified-printed.test.ts).
    expect(run.stderr.trim().split("\n")).toEqual([
      expect.stringContaining("tacit: warning: the audit log"),
      `tacit: warning: ${CLASSIFIED_PRINTED_NOWHERE}`,
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("hello from the script");
    expect(run.stdout).toContain("classified: Classified(***)");
    expect(run.stdout).toContain("hi there");
    // The secret really went out (so the log had the chance to leak it).
    expect(server.received[0]?.headers.authorization).toBe(CANARY);
    expect(server.received[0]?.headers["x-api-key"]).toBe(HEADER_SECRET);
    expect(run.stdout).toContain("status 200");
    lines = readLines(log);
  }, 60_000);
  afterAll(async () => {
    await server.close();
    ctx.cleanup();
  });

  it("records the evaluation and every action, and verifies", async () => {
    const types = lines.map((line) => line.event.type);
    expect(types[0]).toBe("evaluation-started");
    expect(types.at(-2)).toBe("evaluation-ended");
    expect(types.at(-1)).toBe("head");
    const kinds = lines.flatMap((line) => (line.event.type === "action-requested" ? [String(line.event.kind)] : []));
    for (const kind of ["FsOpenScope", "FsWrite", "FsRead", "FsReadClassified", "ClassifiedMap", "NetOpenScope", "HttpRequest", "ExecOpenScope", "Exec"]) {
      expect(kinds).toContain(kind);
    }
    // Prints are logged together between the other events, as "output": the script's four.
    expect(kinds).not.toContain("Print");
    const outputs = lines.flatMap((line) => (line.event.type === "output" ? [line.event] : []));
    expect(outputs.reduce((sum, event) => sum + Number(event.prints), 0)).toBe(4);
    for (const event of outputs) expect(event).toMatchObject({ digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), size: expect.any(Number) });
    const patterns = lines.flatMap((line) => (line.event.type === "action-requested" ? [String(line.event.pattern)] : []));
    expect(patterns).toContain(`fs.write ${path.join(ctx.dir, "notes.txt")}`);
    expect(patterns).toContain("exec echo hi *");
    expect(patterns).toContain(`net GET http://127.0.0.1:${server.port}`);
    // Every request has a decision and a result.
    const requested = lines.filter((line) => line.event.type === "action-requested").length;
    expect(lines.filter((line) => line.event.type === "decision")).toHaveLength(requested);
    expect(lines.filter((line) => line.event.type === "action-result")).toHaveLength(requested);

    const { result, report } = await verifyJson(log, ctx.env);
    expect(result.code, result.stdout).toBe(0);
    expect(report).toMatchObject({ ok: true, lines: lines.length, problems: [], unsignedTail: 0 });
  });

  it("holds no classified plaintext and no secret header value, in any common encoding", () => {
    const text = readFileSync(log, "utf8");
    for (const secret of [CANARY, HEADER_SECRET]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(Buffer.from(secret).toString("base64"));
      expect(text).not.toContain(Buffer.from(secret).toString("hex"));
    }
    expect(text).not.toContain("TOKEN=");
  });

  it("catches an edited field on its line", async () => {
    const edited = structuredClone(lines);
    const at = lineOf((line) => line.event.type === "action-requested" && line.event.kind === "Exec");
    (edited[at]!.event as { pattern: string }).pattern = "exec echo harmless";
    const { result, report } = await verifyJson(variant("edited", edited), ctx.env);
    expect(result.code).toBe(1);
    expect(report.problems).toEqual([{ line: at + 1, reason: expect.stringMatching(/^edited/) }]);
  });

  it("catches text added to a line that its hash does not see: a repeated key, a __proto__ member", async () => {
    const text = readFileSync(log, "utf8").split("\n");
    const at = lineOf((line) => line.event.type === "action-requested" && line.event.kind === "Exec");
    const pattern = `"pattern":${JSON.stringify((lines[at]!.event as { pattern: string }).pattern)}`;
    expect(text[at]).toContain(pattern);
    for (const [name, added] of [
      ["repeated", `"pattern":"exec echo harmless",${pattern}`],
      ["proto", `"__proto__":{"pattern":"exec echo harmless"},${pattern}`],
    ] as const) {
      const edited = [...text];
      edited[at] = text[at]!.replace(pattern, added);
      const { result, report } = await verifyJson(variant(name, edited.join("\n")), ctx.env);
      expect(result.code, name).toBe(1);
      expect(report.problems, name).toEqual([{ line: at + 1, reason: expect.stringMatching(/^edited: the line is not written as tacit writes it/) }]);
    }
  });

  it("catches a line written another way with the same parsed content: BOM, CRLF, an escaped letter, a number form, spaces", async () => {
    // Each variant parses to exactly the genuine line's values, so its hash and chain still
    // match: only the check that the text is what tacit writes can tell (a sixth review).
    const text = readFileSync(log, "utf8").split("\n");
    const at = lineOf((line) => line.event.type === "action-requested" && line.event.kind === "Exec");
    const genuine = text[at]!;
    const seq = `"seq":${lines[at]!.seq},`;
    const action = `"action":${(lines[at]!.event as { action: number }).action},`;
    expect(genuine).toContain('"pattern":"exec echo');
    expect(genuine).toContain(seq);
    expect(genuine).toContain(action);
    const variants: Array<[string, number, string]> = [
      ["bom", 0, `\ufeff${text[0]!}`],
      ["crlf", at, `${genuine}\r`],
      ["escaped letter", at, genuine.replace('"pattern":"exec echo', '"pattern":"\\u0065xec echo')],
      ["escaped tier", at, genuine.replace('"tier":"allow"', '"tier":"\\u0061llow"')],
      ["seq as 5.0", at, genuine.replace(seq, seq.replace(/,$/, ".0,"))],
      ["action as 1e0", at, genuine.replace(action, action.replace(/(\d+),$/, "$1e0,"))],
      ["space after a colon", at, genuine.replace(seq, seq.replace(":", ": "))],
    ];
    for (const [name, line, replaced] of variants) {
      expect(replaced, name).not.toBe(text[line]);
      // The same values to a parser (a BOM aside): the hash and chain still match.
      expect(JSON.parse(replaced.replace(/^\ufeff/, "")), name).toEqual(JSON.parse(text[line]!));
      const edited = [...text];
      edited[line] = replaced;
      const { result, report } = await verifyJson(variant(name.replace(/\W+/g, "-"), edited.join("\n")), ctx.env);
      expect(result.code, name).toBe(1);
      expect(report.problems.map((problem) => problem.line), name).toContain(line + 1);
    }
  });

  it("catches bytes that are not UTF-8 where the writer wrote a U+FFFD (the text read is the same, the file is not)", async () => {
    // The script chooses a file name holding U+FFFD; its UTF-8 (EF BF BD) is then replaced with
    // a cut-off 4-byte sequence of the same length, which decodes to U+FFFD again.
    const fffdLog = path.join(ctx.dir, "fffd.jsonl");
    writeFileSync(path.join(ctx.dir, "fffd.ts"), `requestFileSystem(".", (fs) => fs.access("notes-\\uFFFD.txt").write("x"));\n`);
    const run = await runCli(unchecked(["run", "--audit-log", fffdLog, "fffd.ts"]), { cwd: ctx.dir, env: ctx.env });
    expect(run.code, run.stderr).toBe(0);
    const genuine = readFileSync(fffdLog);
    const replacement = Buffer.from("\uFFFD");
    const at = genuine.indexOf(replacement);
    expect(at).toBeGreaterThan(0);
    expect((await verifyJson(fffdLog, ctx.env)).result.code).toBe(0);
    const tampered = Buffer.from(genuine);
    Buffer.from([0xf0, 0x9f, 0x98]).copy(tampered, at);
    expect(tampered.toString("utf8")).toBe(genuine.toString("utf8"));
    const file = path.join(ctx.dir, "fffd-tampered.jsonl");
    writeFileSync(file, tampered, { mode: 0o600 });
    const line = genuine.subarray(0, at).toString("utf8").split("\n").length;
    const { result, report } = await verifyJson(file, ctx.env);
    expect(result.code).toBe(1);
    expect(report.problems).toEqual([{ line, reason: expect.stringMatching(/^edited: the line's bytes are not UTF-8/) }]);
  });

  it("catches a deleted line where the gap is", async () => {
    const at = lineOf((line) => line.event.type === "decision" && line.event.decision === "allow") + 3;
    const deleted = lines.filter((_, i) => i !== at);
    const { result, report } = await verifyJson(variant("deleted", deleted), ctx.env);
    expect(result.code).toBe(1);
    expect(report.problems[0]).toEqual({ line: at + 1, reason: expect.stringMatching(/seq jumps from/) });
  });

  it("catches two swapped lines", async () => {
    const swapped = [...lines];
    [swapped[5], swapped[6]] = [swapped[6]!, swapped[5]!];
    const { result, report } = await verifyJson(variant("swapped", swapped), ctx.env);
    expect(result.code).toBe(1);
    expect(report.problems.map((p) => p.line)).toEqual(expect.arrayContaining([6, 7]));
    expect(report.problems.map((p) => p.reason).join("\n")).toMatch(/out of order/);
  });

  it("catches a forged line appended after the last signed head", async () => {
    const last = lines.at(-1)!;
    const forged = rechain([...lines, { ...last, seq: last.seq + 1, event: { type: "session-ended", session: "s-forged", reason: "forged" } as Line["event"] }], lines.length);
    const { result, report } = await verifyJson(variant("appended", forged), ctx.env);
    expect(result.code).toBe(1);
    expect(report.problems).toEqual([{ line: lines.length + 1, reason: expect.stringMatching(/not signed/) }]);
  });

  it("catches a truncated log (the last head cut off)", async () => {
    const file = variant("truncated", readFileSync(log, "utf8"));
    truncateSync(file, readFileSync(log).length - 40);
    const { result, report } = await verifyJson(file, ctx.env);
    expect(result.code).toBe(1);
    const reasons = report.problems.map((p) => `${p.line}: ${p.reason}`).join("\n");
    expect(reasons).toContain(`${lines.length}: `);
    expect(reasons).toMatch(/incomplete/);
  });

  it("catches a log re-signed with another key, against this machine's key and against --public-key", async () => {
    const at = lineOf((line) => line.event.type === "action-requested" && line.event.kind === "Exec");
    const edited = structuredClone(lines);
    (edited[at]!.event as { pattern: string }).pattern = "exec echo harmless";
    const forged = rechain(edited, at, newPrivateKey());
    const file = variant("resigned", forged);
    const mine = await verifyJson(file, ctx.env);
    expect(mine.result.code).toBe(1);
    expect(mine.report.problems).toEqual([{ line: lines.length, reason: expect.stringMatching(/different key/) }]);
    const key = JSON.parse(readFileSync(ctx.keyFile, "utf8")) as { publicKey: string };
    const given = await verifyJson(file, { TACIT_HOME: path.join(ctx.dir, "elsewhere") }, ["--public-key", key.publicKey]);
    expect(given.result.code).toBe(1);
    expect(given.report.problems[0]?.reason).toMatch(/different key/);
  });

  it("a second run appends to the same chain, which still verifies", async () => {
    const copy = variant("two-runs", readFileSync(log, "utf8"));
    writeFileSync(path.join(ctx.dir, "second.ts"), 'println("second");\n');
    const run = await runCli(unchecked(["run", "--audit-log", copy, "second.ts"]), { cwd: ctx.dir, env: ctx.env });
    expect(run.code, run.stderr).toBe(0);
    const after = readLines(copy);
    expect(after.length).toBeGreaterThan(lines.length);
    expect(after[lines.length]!.prev).toBe(lines.at(-1)!.chain);
    const { result } = await verifyJson(copy, ctx.env);
    expect(result.code).toBe(0);
  });
});

describe("the decisions the audit log records", () => {
  it("records an action the allowlists or the scope refused as denied, with the refusal, not as allowed", async () => {
    const ctx = auditHome();
    try {
      const { work, log } = workAndLog(ctx.dir, "logs");
      const outside = path.join(ctx.dir, "outside.txt");
      writeFileSync(outside, "outside the root\n");
      const script =
        `try { requestExecPermission(["rm"], (proc) => proc.exec("rm", ["-rf", "."])); } catch (e) { println("refused:", String(e)); }\n` +
        `requestFileSystem(".", (fs) => {\n` +
        `  try { fs.access(${JSON.stringify(outside)}).read(); } catch (e) { println("refused:", String(e)); }\n` +
        `  try { fs.access("missing.txt").read(); } catch (e) { println("failed:", String(e)); }\n` +
        `});\n`;
      const run = await runCli(unchecked(["run", "--audit-log", log, "--command-permissions", "echo", "-"]), { cwd: work, env: ctx.env, input: script });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout.match(/refused: SecurityError/g)).toHaveLength(2);
      expect(run.stdout).toMatch(/failed: Error/);
      const lines = readLines(log);
      const requested = (pattern: string): number => {
        const line = lines.find((l) => l.event.type === "action-requested" && l.event.pattern === pattern);
        expect(line, pattern).toBeDefined();
        return Number(line!.event.action);
      };
      const decisionsOf = (action: number) => lines.filter((l) => l.event.type === "decision" && l.event.action === action).map((l) => l.event);
      // Each action has one decision, and it is what the host did: the refusals say so and why.
      expect(decisionsOf(requested("exec.open rm"))).toEqual([
        expect.objectContaining({ decision: "deny", via: "policy", reason: expect.stringMatching(/"rm" is not among the permitted commands.*--command-permissions/) }),
      ]);
      expect(decisionsOf(requested(`fs.read ${outside}`))).toEqual([
        expect.objectContaining({ decision: "deny", via: "policy", reason: expect.stringContaining("outside this file system scope") }),
      ]);
      // An allowed action that failed (no such file) was allowed: its result says it failed.
      expect(decisionsOf(requested(`fs.read ${path.join(work, "missing.txt")}`))).toEqual([expect.objectContaining({ decision: "allow", reason: null })]);
      const requests = lines.filter((l) => l.event.type === "action-requested").length;
      expect(lines.filter((l) => l.event.type === "decision")).toHaveLength(requests);
      expect((await verifyJson(log, ctx.env)).result.code).toBe(0);
    } finally {
      ctx.cleanup();
    }
  }, 30_000);
});

describe("an action under way when its evaluation is killed", () => {
  it("is logged with its decision and result before the evaluation's end", async () => {
    const ctx = auditHome();
    try {
      const { work, log } = workAndLog(ctx.dir);
      const config = path.join(ctx.dir, "limit.json");
      writeFileSync(config, JSON.stringify({ executionTimeoutMs: 2000 }));
      const script = 'requestExecPermission(["sleep"], (proc) => proc.exec("sleep", ["30"]));\n';
      const run = await runCli(unchecked(["run", "--config", config, "--audit-log", log, "--command-permissions", "sleep", "-"]), { cwd: work, env: ctx.env, input: script });
      expect(run.code, run.stderr).toBe(124);
      const events = readLines(log).map((line) => line.event);
      const exec = events.find((event) => event.type === "action-requested" && event.kind === "Exec");
      expect(exec, JSON.stringify(events)).toMatchObject({ commandLine: "sleep 30" });
      const of = (type: string) => events.findIndex((event) => event.type === type && event.action === exec!.action);
      const ended = events.findIndex((event) => event.type === "evaluation-ended");
      // The command ran (until the time limit killed it): the log says it was allowed and how it ended.
      expect(events[of("decision")]).toMatchObject({ decision: "allow", via: "policy" });
      expect(events[of("action-result")]).toMatchObject({ ok: true });
      expect(of("decision")).toBeLessThan(ended);
      expect(of("action-result")).toBeLessThan(ended);
      expect(events[ended]).toMatchObject({ outcome: "timeout" });
      expect((await verifyJson(log, ctx.env)).result.code).toBe(0);
    } finally {
      ctx.cleanup();
    }
  }, 30_000);
});

describe("a request that follows redirects", () => {
  it("records each hop it was sent to, with a secret the server echoed into the URL redacted", async () => {
    const ctx = auditHome();
    const elsewhere = await startServer((_request, response) => response.end("stored"));
    // The first server sends its client on, 307 (the body goes along), echoing its secret header into the URL.
    const first = await startServer((request, response) => {
      response.writeHead(307, { location: `${elsewhere.origin}/collect?seen=${String(request.headers["x-api-key"])}` });
      response.end();
    });
    try {
      const { work, log } = workAndLog(ctx.dir);
      const script =
        `requestNetwork(["127.0.0.1:*"], (net) => println(net.httpPost("${first.origin}/upload", "the agent's data", ` +
        `{ secretHeaders: { "x-api-key": classify("${HEADER_SECRET}") } })));\n`;
      const run = await runCli(unchecked(["run", "--audit-log", log, "--network-permissions", "127.0.0.1:*", "-"]), { cwd: work, env: ctx.env, input: script });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain("stored");
      // The data reached the second server, which the script never named.
      expect(elsewhere.received).toEqual([expect.objectContaining({ method: "POST", url: `/collect?seen=${HEADER_SECRET}`, body: "the agent's data" })]);
      const events = readLines(log).map((line) => line.event);
      const request = events.find((event) => event.type === "action-requested" && event.kind === "HttpRequest");
      expect(request).toMatchObject({ url: `${first.origin}/upload` });
      const result = events.find((event) => event.type === "action-result" && event.action === request!.action);
      expect(result).toMatchObject({ ok: true, redirects: [`POST ${elsewhere.origin}/collect?seen=[redacted]`] });
      expect(readFileSync(log, "utf8")).not.toContain(HEADER_SECRET);
      const shown = await runCli(["audit", "show", log], { env: ctx.env });
      expect(shown.stdout).toContain(`redirected: "POST ${elsewhere.origin}/collect?seen=[redacted]"`);
      expect((await verifyJson(log, ctx.env)).result.code).toBe(0);
    } finally {
      await first.close();
      await elsewhere.close();
      ctx.cleanup();
    }
  }, 30_000);
});

describe("a redirect hop refused after its URL passed the checks", () => {
  it("is not recorded as followed: the request failed, and the log lists no hop it was never sent to", async () => {
    const ctx = auditHome();
    // A restricted address allowed by a glob alone passes the URL check and is refused as the hop
    // starts, before anything is sent: as a hop whose request's deadline has passed is.
    const first = await startServer((_request, response) => {
      response.writeHead(302, { location: "http://10.0.0.1:9/internal" });
      response.end();
    });
    try {
      const { work, log } = workAndLog(ctx.dir);
      const script =
        `try { net(); } catch (error) { println("refused:", (error as Error).message); }\n` +
        `function net() { requestNetwork(["127.0.0.1:${first.port}", "10.0.0.*:*"], (net) => println(net.httpGet("${first.origin}/start"))); }\n`;
      const run = await runCli(unchecked(["run", "--audit-log", log, "--network-permissions", `127.0.0.1:${first.port},10.0.0.*:*`, "-"]), {
        cwd: work,
        env: ctx.env,
        input: script,
      });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/refused:.*was redirected to http:\/\/10\.0\.0\.1:9\/internal, which tacit did not follow: 10\.0\.0\.1 is a loopback, private or link-local address/);
      expect(first.received.map((request) => request.url)).toEqual(["/start"]);
      const events = readLines(log).map((line) => line.event);
      const request = events.find((event) => event.type === "action-requested" && event.kind === "HttpRequest");
      expect(request).toMatchObject({ url: `${first.origin}/start` });
      const result = events.find((event) => event.type === "action-result" && event.action === request!.action);
      expect(result).toMatchObject({ ok: false });
      expect(result, JSON.stringify(result)).not.toHaveProperty("redirects");
      const shown = await runCli(["audit", "show", log], { env: ctx.env });
      expect(shown.stdout).not.toContain("redirected:");
      expect((await verifyJson(log, ctx.env)).result.code).toBe(0);
    } finally {
      await first.close();
      ctx.cleanup();
    }
  }, 30_000);
});

describe("a file action through a link", () => {
  it("records where the path really leads beside the path as the script named it", async () => {
    const ctx = auditHome();
    try {
      const log = path.join(ctx.dir, "audit.jsonl");
      const work = path.join(ctx.dir, "work");
      mkdirSync(path.join(work, "releases", "v2"), { recursive: true });
      symlinkSync(path.join("releases", "v2"), path.join(work, "current"));
      writeFileSync(path.join(ctx.dir, "outside.txt"), "not in the scope\n");
      symlinkSync(path.join(ctx.dir, "outside.txt"), path.join(work, "out"));
      // Reads no rule looks at are logged with where the executor found their path to lead (FileSystemExecutor.watch).
      const script =
        'requestFileSystem(".", (fs) => {\n' +
        '  fs.access("current/app.conf").write("listen 0.0.0.0\\n");\n' +
        '  print(fs.access("current/app.conf").read());\n' +
        '  try { fs.access("out").read(); } catch (error) { println(String(error).split(":")[0]); }\n' +
        "});\n";
      const run = await runCli(unchecked(["run", "--audit-log", log, "-"]), { cwd: work, env: ctx.env, input: script });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe("listen 0.0.0.0\nSecurityError\n");
      const real = realpathSync(work);
      expect(readFileSync(path.join(real, "releases", "v2", "app.conf"), "utf8")).toBe("listen 0.0.0.0\n");
      const write = readLines(log).find((line) => line.event.type === "action-requested" && line.event.kind === "FsWrite")!.event;
      expect(write).toMatchObject({ pattern: `fs.write ${path.join(real, "current", "app.conf")}`, realPath: path.join(real, "releases", "v2", "app.conf") });
      const logged = readLines(log);
      const reads = logged.filter((line) => line.event.type === "action-requested" && line.event.kind === "FsRead");
      expect(reads.map((line) => [line.event.pattern, line.event.realPath])).toEqual([
        [`fs.read ${path.join(real, "current", "app.conf")}`, path.join(real, "releases", "v2", "app.conf")],
        [`fs.read ${path.join(real, "out")}`, path.join(realpathSync(ctx.dir), "outside.txt")],
      ]);
      // Each in its place: its request, then its decision (the second refused), then its result.
      const events = logged.map((line) => line.event);
      for (const [i, read] of reads.entries()) {
        const at = events.indexOf(read.event);
        expect(events.slice(at + 1, at + 3).map((event) => [event.type, event.action, event.decision])).toEqual([
          ["decision", read.event.action, i === 0 ? "allow" : "deny"],
          ["action-result", read.event.action, undefined],
        ]);
      }
      // A path that is no link has none.
      const open = readLines(log).find((line) => line.event.type === "action-requested" && line.event.kind === "FsOpenScope")!.event;
      expect(open.realPath).toBeUndefined();
      const shown = await runCli(["audit", "show", log], { env: ctx.env });
      expect(shown.stdout).toContain(`"fs.write ${path.join(real, "current", "app.conf")}" -> "${path.join(real, "releases", "v2", "app.conf")}"  tier allow`);
      expect((await verifyJson(log, ctx.env)).result.code).toBe(0);
    } finally {
      ctx.cleanup();
    }
  }, 30_000);
});

describe("the audit log of tacit serve", () => {
  let ctx: ReturnType<typeof auditHome>;
  beforeAll(() => {
    ctx = auditHome();
  });
  afterAll(() => ctx.cleanup());

  it("logs one-shot calls and a session from creation to deletion, signed, and verifies", async () => {
    const log = path.join(ctx.dir, "serve.jsonl");
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [tacitBin, "serve", "--audit-log", log],
      cwd: ctx.dir,
      env: { PATH: process.env.PATH ?? "", ...ctx.env },
      stderr: "ignore",
    });
    const client = new Client({ name: "tacit-test", version: "0.0.0" });
    await client.connect(transport);
    try {
      const oneShot = await client.callTool({ name: "execute_typescript", arguments: { code: 'println("one")' } });
      expect(oneShot.isError).toBeFalsy();
      const created = await client.callTool({ name: "create_repl_session", arguments: {} });
      const session = (created.structuredContent as { session_id: string }).session_id;
      await client.callTool({ name: "execute_in_session", arguments: { session_id: session, code: "const x = 21" } });
      const doubled = await client.callTool({ name: "execute_in_session", arguments: { session_id: session, code: "x * 2" } });
      expect((doubled.structuredContent as { stdout: string }).stdout).toContain("42");
      await client.callTool({ name: "delete_repl_session", arguments: { session_id: session } });
      const lines = readLines(log);
      const types = lines.map((line) => line.event.type);
      expect(types).toContain("session-started");
      expect(types).toContain("session-ended");
      // The session's end was signed at once (not left for the server's exit).
      expect(types.at(-1)).toBe("head");
      const snippets = lines.filter((line) => line.event.type === "evaluation-started" && line.event.session === session);
      expect(snippets).toHaveLength(2);
    } finally {
      await client.close();
    }
    expect(existsSync(writerLockFor(ctx.keyFile, log))).toBe(false);
    const { result, report } = await verifyJson(log, ctx.env);
    expect(result.code, JSON.stringify(report.problems)).toBe(0);
  }, 60_000);
});

/** A writer's lock held by this (live) process, made as the writer makes it. */
function writeLiveLock(lock: string): void {
  mkdirSync(path.dirname(lock), { recursive: true, mode: 0o700 });
  writeFileSync(lock, `${process.pid}\n`);
}

describe("an audit log that cannot be opened", () => {
  // A log that cannot be opened stops the run before the script does anything.
  it.each([
    ["its lock is held by a live process", (log: string, keyFile: string) => writeLiveLock(writerLockFor(keyFile, log)), /is being written by process/],
    ["others can write to it", (log: string) => writeFileSync(log, "", { mode: 0o666 }), /other users can write to the audit log/],
  ])("when %s, the run fails with the reason and the script does nothing", async (_what, spoil, reason) => {
    const ctx = auditHome();
    try {
      const log = path.join(ctx.dir, "logs", "audit.jsonl");
      const work = path.join(ctx.dir, "work");
      for (const dir of [path.dirname(log), work]) mkdirSync(dir, { recursive: true });
      spoil(log, ctx.keyFile);
      if (existsSync(log)) chmodSync(log, 0o666); // writeFileSync's mode is filtered by the umask
      const script = 'println("printed");\nrequestFileSystem(".", (fs) => fs.access("marker.txt").write("written"));\nprintln("after");\n';
      const run = await runCli(unchecked(["run", "--audit-log", log, "-"]), { cwd: work, env: ctx.env, input: script });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(reason);
      expect(run.stdout).toBe("");
      expect(existsSync(path.join(work, "marker.txt"))).toBe(false);
    } finally {
      ctx.cleanup();
    }
  });
});
