// What the audit log says of a command. Its pattern is the shape approvals are kept by
// ("exec rm *", "exec git *"), which a seventh security review showed hides what ran: a script
// deleted deploy/prod.conf with `rm -f prod.conf` in deploy/, and the log of that real run said
// "exec rm *", nothing of the file or the directory (the same as `rm -f tmp.txt` in scratch/).
// Each command's request now carries its words, where it ran and its input's digest.

import { createHash } from "node:crypto";
import { existsSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers.js";
import { auditHome, type Line, readLines, verifyJson } from "./fixtures.js";

const LONG = "x".repeat(10_000);

const SCRIPT = `
requestExecPermission(["rm", "printf", "cat"], (p) => {
  p.exec("rm", ["-f", "prod.conf"], { cwd: "deploy" });
  p.exec("rm", ["-f", "tmp.txt"], { cwd: "docs" });
  p.exec("printf", ["%s", "two words", "it's \\"quoted\\"\\nand broken"]);
  p.exec("printf", ["%s", ${JSON.stringify(LONG)}]);
  println(p.exec("cat", [], { input: "piped to cat" }).stdout);
});
`;

const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

describe("a command in the audit log of a real tacit run", () => {
  let ctx: ReturnType<typeof auditHome>;
  let work: string;
  let log: string;
  let commands: Line["event"][];

  beforeAll(async () => {
    ctx = auditHome();
    work = path.join(ctx.dir, "work");
    for (const dir of ["deploy", "scratch"]) mkdirSync(path.join(work, dir), { recursive: true });
    writeFileSync(path.join(work, "deploy", "prod.conf"), "keep\n");
    writeFileSync(path.join(work, "scratch", "tmp.txt"), "scratch\n");
    // docs leads to scratch: the record names where the command really ran.
    symlinkSync("scratch", path.join(work, "docs"));
    writeFileSync(path.join(work, "script.ts"), SCRIPT);
    log = path.join(ctx.dir, "audit.jsonl");
    const run = await runCli(["run", "--audit-log", log, "--command-permissions", "rm,printf,cat", "script.ts"], { cwd: work, env: ctx.env });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("piped to cat");
    // The script really deleted both files (so the log had something to hide).
    expect(existsSync(path.join(work, "deploy", "prod.conf"))).toBe(false);
    expect(existsSync(path.join(work, "scratch", "tmp.txt"))).toBe(false);
    commands = readLines(log).flatMap((line) => (line.event.type === "action-requested" && line.event.kind === "Exec" ? [line.event] : []));
  }, 60_000);
  afterAll(() => ctx.cleanup());

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

  it("verifies, and tacit audit show prints each command's line and directory", async () => {
    const { result, report } = await verifyJson(log, ctx.env);
    expect(result.code, result.stdout).toBe(0);
    expect(report).toMatchObject({ ok: true, problems: [] });
    const shown = await runCli(["audit", "show", log], { env: ctx.env });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`"exec rm *"  tier allow  run: "rm -f prod.conf" (in ${JSON.stringify(path.join(realpathSync(work), "deploy"))})`);
    expect(shown.stdout).toContain(`run: "cat" (in ${JSON.stringify(realpathSync(work))}, input ${sha256("piped to cat").slice(0, 19)}…)`);
  });
});
