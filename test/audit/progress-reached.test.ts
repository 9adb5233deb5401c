// Two of the progress values an action-result can hold that no other test reached through the
// real CLI: an HTTP request's `connected` (its connection was up, but the request was not all
// handed to the server: part of it may have reached it), and a command's `not-started` where
// confinement (--confine-commands) refused it after its decision allowed it. Each from a real
// `tacit run --audit-log`, a real Deno and a real server or command; the log verifies, and
// `tacit audit show` says how far each got.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { probeNamespaceWrapper } from "../../runner/exec/pid-namespace.js";
import { runCli, unchecked } from "../helpers.js";
import { auditHome, expectVerifiedAndShown, readLines, workAndLog } from "./fixtures.js";

const CANARY = "canary-5d1e77";

/** The action-result of the run's only action of `kind`. */
function resultOfKind(log: string, kind: string): Record<string, unknown> {
  const events = readLines(log).map((line) => line.event as Record<string, unknown>);
  const request = events.find((event) => event.type === "action-requested" && event.kind === kind);
  expect(request, `no ${kind} request in the log`).toBeDefined();
  const decision = events.find((event) => event.type === "decision" && event.action === request!.action);
  expect(decision).toMatchObject({ decision: "allow" });
  return events.find((event) => event.type === "action-result" && event.action === request!.action)!;
}

// Concurrent: each test has its own home, server and directories (each cleaned up with its own
// test), and the first mostly waits for its request's time limit.
describe.concurrent("progress values reached through the real CLI", () => {
  it("a POST whose server took the connection but never read it says connected (not sent), and ran out of time", async ({ onTestFinished }) => {
    const ctx = auditHome();
    onTestFinished(ctx.cleanup);
    // Accepts, never reads: a body of nearly 4 MiB (the most one call carries) cannot all be handed
    // to the OS for it, so the request is never written whole ("finish"), and no answer comes.
    const sockets: net.Socket[] = [];
    const server = net.createServer((socket) => {
      socket.pause();
      sockets.push(socket);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    onTestFinished(() => {
      for (const socket of sockets) socket.destroy();
      server.close();
    });
    const port = (server.address() as net.AddressInfo).port;
    const { work, log } = workAndLog(ctx.dir);
    const config = path.join(ctx.dir, "tacit.json");
    writeFileSync(config, JSON.stringify({ libraryConfig: { networkPermissions: [`127.0.0.1:${port}`], networkTimeoutMs: 2000 } }));
    const script =
      `requestNetwork(["127.0.0.1:${port}"], (net) => {\n` +
      `  try { net.httpPost("http://127.0.0.1:${port}/upload", "${CANARY}" + "x".repeat(4 * 1024 * 1024 - 64 * 1024)); }\n` +
      `  catch (error) { println("failed:", String(error).includes("within 2000 ms")); }\n` +
      `});\n`;
    const run = await runCli(unchecked(["run", "--config", config, "--audit-log", log, "-"]), { cwd: work, env: ctx.env, input: script });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe("failed: true\n");
    expect(sockets).toHaveLength(1);

    expect(resultOfKind(log, "HttpRequest")).toMatchObject({ ok: false, requestProgress: "connected", timedOut: "http-timeout", timeLimitMs: 2000 });
    expect(readFileSync(log, "utf8")).not.toContain(CANARY);
    await expectVerifiedAndShown(log, ctx.env, ["  failed  request connected  ", "timed out: http-timeout of 2000 ms"]);
  }, 60_000);

  it("a command confinement refused (its working directory is covered) says not-started, and did nothing", async (test) => {
    // Where the host gives commands no mount namespace, confinement refuses every command, this one for another reason.
    const reasons: string[] = [];
    const wrapper = probeNamespaceWrapper(["/usr/bin/unshare", "/bin/unshare"], (r) => reasons.push(r), (r) => reasons.push(r));
    test.skip(wrapper?.ownProc !== true, `this host cannot give commands a mount namespace (${reasons.join("; ")})`);
    const ctx = auditHome();
    test.onTestFinished(ctx.cleanup);
    const { work, log } = workAndLog(ctx.dir);
    writeFileSync(path.join(work, "victim.txt"), "keep me\n");
    // .ssh is classified: in the confined view it is an empty directory, so no command may run in it.
    mkdirSync(path.join(work, ".ssh"));
    const script =
      `requestExecPermission(["rm"], (proc) => {\n` +
      `  try { proc.exec("rm", ["-f", "../victim.txt", "${CANARY}"], { cwd: ".ssh" }); println("ran"); }\n` +
      `  catch (error) { println("refused:", String(error).includes("is covered in the confined view")); }\n` +
      `});\n`;
    const run = await runCli(unchecked(["run", "--confine-commands", "--command-permissions", "rm", "--audit-log", log, "-"]), {
      cwd: work,
      env: ctx.env,
      input: script,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe("refused: true\n");
    expect(existsSync(path.join(work, "victim.txt"))).toBe(true);

    expect(resultOfKind(log, "Exec")).toMatchObject({ ok: false, commandProgress: "not-started" });
    await expectVerifiedAndShown(log, ctx.env, ["  failed  command not-started  "]);
  }, 60_000);
});
