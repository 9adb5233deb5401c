// --confine-commands and the Unix sockets, FIFOs and device nodes inside the allowed roots
// (runner/exec/confinement.ts, walkClassified). A socket is a door to the process listening on it, which acts for whoever
// connects (a docker.sock, an ssh agent's, a database's); the roots being writable says nothing of
// what that process will do. A confined `node` connected to a socket placed in the root and had its
// server act on what it sent (shown through the CLI). The walk now covers every socket it finds in
// the roots with an empty file, as it covers a classified one: connect(2) finds no listener there.
// The servers below count connections themselves: the command's word is not taken for it. So are a
// FIFO that a process outside reads commands from, and a device node placed in a root (the roots are
// not nodev), which the file API refuses to open for the same reason (opensWithEffect).

import { execFileSync, spawn } from "node:child_process";
import { closeSync, constants, mkdirSync, openSync, symlinkSync, writeSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, confinementDir, lit, tacit } from "./fixtures.js";

/** A loopback Unix server at `socket` that counts its connections and keeps what they sent. */
async function listening(ctx: TestContext, socket: string): Promise<{ connections: () => number; received: string[] }> {
  let connections = 0;
  const received: string[] = [];
  const server = net.createServer((connection) => {
    connections++;
    connection.on("data", (data) => received.push(String(data)));
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  ctx.onTestFinished(() => void server.close());
  return { connections: () => connections, received };
}

/** Node code that connects to each of `sockets` in turn, sends a request, and prints what happened to each. */
function connectEach(sockets: readonly string[]): string {
  return `const sockets = ${JSON.stringify(sockets)};
const next = (i) => {
  if (i === sockets.length) return;
  const c = require("net").connect(sockets[i], () => { c.end("POST /containers/create"); console.log(sockets[i], "connected"); next(i + 1); });
  c.on("error", (e) => { console.log(sockets[i], "refused", e.code); next(i + 1); });
};
next(0);`;
}

describe.concurrent("a confined command and the Unix sockets in the allowed roots", () => {
  it("cannot connect to a socket placed in a root, nested, or named through a link, and its server sees no connection", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-confine-sockets-");
    const project = path.join(dir, "project");
    mkdirSync(path.join(project, "run", "deep"), { recursive: true });
    const daemons = await Promise.all(["docker.sock", "run/deep/agent.sock"].map((name) => listening(ctx, path.join(project, name))));
    symlinkSync("run/deep/agent.sock", path.join(project, "agent-link.sock"));
    const code = `${ATTEMPT_PRELUDE}
requestExecPermission(["node"], (proc) => attempt("node", () => proc.exec("node", ["-e", ${lit(connectEach(["docker.sock", "run/deep/agent.sock", "agent-link.sock"]))}])));
`;
    const r = await tacit(project, code, ["--command-permissions", "node", "--confine-commands"], { HOME: dir });
    expect(r.code, r.stderr).toBe(0);
    const ran = attemptOf(attempts(r.stdout), "node");
    expect(ran.status, JSON.stringify(ran.value)).toBe("ok");
    // The command ran and found an empty file at each name: nothing listens there.
    expect((ran.value as { stdout: string }).stdout).toBe(
      "docker.sock refused ECONNREFUSED\nrun/deep/agent.sock refused ECONNREFUSED\nagent-link.sock refused ECONNREFUSED\n",
    );
    // And the servers were reached by nobody (a connection made while the command ran is counted by now).
    for (const daemon of daemons) {
      expect(daemon.connections()).toBe(0);
      expect(daemon.received).toEqual([]);
    }
  });

  it("still reaches a socket it makes itself while it runs (its own server, confined with it)", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-confine-sockets-");
    const project = path.join(dir, "project");
    mkdirSync(project);
    const own = `const net = require("net");
const server = net.createServer((c) => c.on("data", (d) => { console.log("served", String(d)); server.close(); c.end(); }));
server.listen("own.sock", () => { const c = net.connect("own.sock", () => c.end("hello")); c.on("error", (e) => console.log("refused", e.code)); });`;
    const code = `${ATTEMPT_PRELUDE}
requestExecPermission(["node"], (proc) => attempt("node", () => proc.exec("node", ["-e", ${lit(own)}])));
`;
    const r = await tacit(project, code, ["--command-permissions", "node", "--confine-commands"], { HOME: dir });
    expect(r.code, r.stderr).toBe(0);
    const ran = attemptOf(attempts(r.stdout), "node");
    expect(ran.value).toMatchObject({ exitCode: 0, stdout: "served hello\n" });
  });

  it("cannot write into a FIFO a process outside reads, nor read a device node placed in the root", async (ctx) => {
    const dir = confinementDir(ctx, "tacit-confine-sockets-");
    const project = path.join(dir, "project");
    mkdirSync(project);
    const fifo = path.join(project, "commands.fifo");
    execFileSync("mkfifo", [fifo]);
    // A reader outside tacit, as a `while read` loop that runs what it reads would be.
    const reader = spawn("cat", [fifo], { stdio: ["ignore", "pipe", "ignore"] });
    let read = "";
    reader.stdout.on("data", (chunk: Buffer) => (read += chunk.toString()));
    const readerEnded = new Promise<void>((resolve) => reader.once("close", () => resolve()));
    ctx.onTestFinished(() => void reader.kill());
    // A copy of /dev/zero's node: only root may make one (the command, in its user namespace, cannot).
    const root = process.getuid?.() === 0;
    if (root) execFileSync("mknod", [path.join(project, "zero-device"), "c", "1", "5"]);
    const attack = `const fs = require("fs");
try { fs.writeFileSync("commands.fifo", "touch PWNED\\n"); console.log("fifo written"); } catch (e) { console.log("fifo", e.code); }
if (fs.existsSync("zero-device")) { const fd = fs.openSync("zero-device", "r"); console.log("device read", fs.readSync(fd, Buffer.alloc(16), 0, 16, null)); }`;
    const code = `${ATTEMPT_PRELUDE}
requestExecPermission(["node"], (proc) => attempt("node", () => proc.exec("node", ["-e", ${lit(attack)}])));
`;
    const r = await tacit(project, code, ["--command-permissions", "node", "--confine-commands"], { HOME: dir });
    expect(r.code, r.stderr).toBe(0);
    const ran = attemptOf(attempts(r.stdout), "node");
    expect(ran.status, JSON.stringify(ran.value)).toBe("ok");
    // An empty read-only file at each name: the write fails, the read ends at once.
    expect((ran.value as { stdout: string }).stdout).toBe(`fifo EROFS\n${root ? "device read 0\n" : ""}`);
    // The reader got nothing from the command: it still waits for its first writer, which is this test.
    expect(reader.exitCode, `the reader ended, having read ${JSON.stringify(read)}`).toBe(null);
    const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    writeSync(writer, "end\n");
    closeSync(writer);
    await readerEnded;
    expect(read).toBe("end\n");
  });
});
