// `tacit audit verify` and `show` can be stopped whatever the log is. A log that is a FIFO: what
// they read from a pipe is copied first (see withOpenLog), and the wait for it must leave tacit
// stoppable. Whoever can write where a log lies can put a FIFO there; read with blocking calls,
// waiting for a writer (in the open) or for a stalled one (in a read) held tacit in the kernel,
// where Ctrl-C, SIGTERM and SIGHUP never reached its handler: only SIGKILL ended it, and its
// temporary copy stayed behind. A log of many GB (or a sparse file of a TB in its place) is read
// in one synchronous stretch, where a handler does not run either: Ctrl-C waited for the whole
// read, and tacit then exited 0.

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { childEnv, tacitBin } from "../helpers.js";
import { cleanLog } from "./fixtures.js";

interface Started {
  child: ChildProcess;
  exited: Promise<{ code: number | null; stdout: string }>;
}

/** `tacit audit <command> <file>`, with its temporary files in `tmp`; killed if the test ends first. */
function startAudit(command: "verify" | "show", file: string, env: Record<string, string>, tmp: string): Started {
  const child = spawn(process.execPath, [tacitBin, "audit", command, file], { env: childEnv({ ...env, TMPDIR: tmp }), stdio: ["ignore", "pipe", "pipe"] });
  const out: Buffer[] = [];
  child.stdout!.on("data", (chunk: Buffer) => out.push(chunk));
  child.stderr!.resume();
  const exited = new Promise<{ code: number | null; stdout: string }>((resolve) =>
    child.on("close", (code) => resolve({ code, stdout: Buffer.concat(out).toString("utf8") })),
  );
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return { child, exited };
}

/** The copy tacit makes of a piped log in `tmp` once it holds `bytes` (a generous limit: it is made at once). */
async function copyHolding(tmp: string, bytes: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    for (const dir of readdirSync(tmp)) {
      try {
        if (readFileSync(path.join(tmp, dir, "log")).length >= bytes) return;
      } catch {
        // Not made yet.
      }
    }
    if (Date.now() > deadline) throw new Error(`tacit made no copy of the piped log holding ${bytes} bytes in ${tmp}: it is not reading the pipe`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("tacit audit verify and show on a FIFO", () => {
  let ctx: ReturnType<typeof cleanLog>["ctx"];
  let log: string;
  let n = 0;
  /** A new FIFO and a directory for tacit's temporary files. */
  const fifoAndTmp = (): { fifo: string; tmp: string } => {
    const fifo = path.join(ctx.dir, `log-${++n}.fifo`);
    execFileSync("mkfifo", [fifo]);
    const tmp = path.join(ctx.dir, `tmp-${n}`);
    mkdirSync(tmp);
    return { fifo, tmp };
  };

  beforeAll(() => {
    const made = cleanLog();
    ctx = made.ctx;
    log = readFileSync(made.original, "utf8");
  });
  afterAll(() => ctx.cleanup());

  it("a log written into the FIFO after tacit opened it is read whole and verified", async () => {
    const { fifo, tmp } = fifoAndTmp();
    const verify = startAudit("verify", fifo, ctx.env, tmp);
    const writer = await open(fifo, "w");
    await writer.write(log);
    await writer.close();
    const { code, stdout } = await verify.exited;
    expect(stdout).toContain(`${fifo}: verified — 22 lines, 2 signed heads (2 valid)`);
    expect(code).toBe(0);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("nothing writing to it: SIGTERM ends verify, with 143, and its copy is removed", async () => {
    const { fifo, tmp } = fifoAndTmp();
    const verify = startAudit("verify", fifo, ctx.env, tmp);
    await copyHolding(tmp, 0);
    verify.child.kill("SIGTERM");
    expect((await verify.exited).code).toBe(143);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("a writer that stalls after three lines: Ctrl-C (SIGINT) ends show, with 130, and its copy is removed", async () => {
    const { fifo, tmp } = fifoAndTmp();
    const show = startAudit("show", fifo, ctx.env, tmp);
    const writer = await open(fifo, "w");
    try {
      const part = log.split("\n").slice(0, 3).join("\n") + "\n";
      await writer.write(part);
      await copyHolding(tmp, Buffer.byteLength(part));
      show.child.kill("SIGINT");
      expect((await show.exited).code).toBe(130);
      expect(readdirSync(tmp)).toEqual([]);
    } finally {
      await writer.close();
    }
  });
});

describe("tacit audit verify on a sparse file of a TiB in place of the log", () => {
  let home: ReturnType<typeof cleanLog>["ctx"];
  beforeAll(() => {
    home = cleanLog().ctx;
  });
  afterAll(() => home.cleanup());

  /** Bytes the process has read so far (/proc/<pid>/io). */
  const bytesRead = (pid: number): number => {
    try {
      return Number(/^rchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"))?.[1] ?? 0);
    } catch {
      return 0;
    }
  };

  it("Ctrl-C (SIGINT) ends it while it reads", async () => {
    const file = path.join(home.dir, "sparse.jsonl");
    execFileSync("truncate", ["-s", "1T", file]);
    const tmp = path.join(home.dir, "tmp");
    mkdirSync(tmp);
    const verify = startAudit("verify", file, home.env, tmp);
    const deadline = Date.now() + 30_000;
    while (bytesRead(verify.child.pid!) < 256 * 1024 * 1024) {
      if (Date.now() > deadline) throw new Error("tacit audit verify did not start reading the sparse file");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    verify.child.kill("SIGINT");
    await verify.exited;
    expect(verify.child.signalCode).toBe("SIGINT");
  });
});
