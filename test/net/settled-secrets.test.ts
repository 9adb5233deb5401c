// A request that sends a map's result as a secret header waits for that result, and the script
// can tell how long it waited, or whether it got past the request at all. How long a map
// function runs depends on the plaintext it is given, so the wait must not: a map result is
// settled on a schedule that depends only on when the script asked for it (MAP_SETTLE_MS), and
// a function that has not answered by then gives a value that could not be computed.
//
// Judged without a clock: a function that never ends for one secret and answers at once for
// another, under a time limit shorter than the evaluator's own limit for one function. Before
// the schedule, the request waited for the function until the time limit killed the script (exit
// 124 for one secret, 0 for the other: a bit of the secret in the exit status); now both runs
// get past the request and print the same thing.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MAP_SETTLE_MS } from "../../runner/classified/store.js";
import { lit, makeCanary, perTestResources, permit, tacit, type TestServer } from "./fixtures.js";

// The runs below mostly wait (each looping one for its map to settle), and share nothing: they run at once.
const resources = perTestResources("tacit-net-settled-", { concurrent: true });

/** A map that never ends on a secret starting "loop", and answers at once on any other. */
const LOOPING = `token.map((t) => {
  if (t.startsWith("loop")) for (;;) {}
  return t.trim();
})`;

interface SentRun {
  code: number | null;
  stdout: string;
  stderr: string;
  sink: string;
  canary: string;
}

/**
 * One run: `.env` holds `prefix` and a canary, `token` is it read, and `header` (an expression
 * of `token` and `fs`) is sent as a secret header.
 */
async function sendHeader(a: TestServer, prefix: string, header: string): Promise<SentRun> {
  const base = resources.dir();
  const root = path.join(base, "work");
  const sink = path.join(base, "sink.log");
  const canary = makeCanary();
  mkdirSync(root);
  writeFileSync(path.join(root, ".env"), `${prefix}${canary}\n`);
  const result = await tacit(
    root,
    `requestFileSystem(".", (fs) => {
  const token = fs.readClassified(".env");
  const header = ${header};
  requestNetwork([${lit(`127.0.0.1:${a.port}`)}], (net) => {
    net.httpGet(${lit(`${a.origin}/echo`)}, { secretHeaders: { "x-token": header } });
  });
});
println("after the request");
`,
    // Shorter than the evaluator's 5 s limit for one function: a request that waited for the
    // function would be killed with the script.
    [...permit(`127.0.0.1:${a.port}`), "--exec-timeout-ms", "4000", "--secure-output", sink],
  );
  return { ...result, sink: readFileSync(sink, "utf8"), canary };
}

/**
 * Sends `header` once for a secret the function answers at once ("fast-…") and once for one it
 * loops forever on ("loop-…"): what the script sees must be the same for both. Both requests are
 * sent: the quick value in plaintext, the looping one as a value that could not be computed
 * (empty), its reason in the secure output only. Returns the looping run. The two runs go at
 * once, each to a server of its own, so that what each server received is that run's alone.
 */
async function sameForEverySecret(header: string): Promise<SentRun> {
  const [toQuick, toLooping] = await Promise.all([resources.server(), resources.server()]);
  const [quick, looping] = await Promise.all([sendHeader(toQuick, "fast-", header), sendHeader(toLooping, "loop-", header)]);
  for (const run of [quick, looping]) {
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe("after the request\n");
    expect(run.stdout + run.stderr).not.toContain(run.canary);
  }
  expect(looping.stdout).toBe(quick.stdout);
  expect(looping.stderr).toBe(quick.stderr);
  expect(toQuick.received.map((r) => r.headers["x-token"])).toEqual([`fast-${quick.canary}`]);
  expect(toLooping.received.map((r) => r.headers["x-token"])).toEqual([""]);
  return looping;
}

describe.concurrent("a map result sent as a secret header", () => {
  it("is sent when it is settled, whatever the function does: the script goes on the same for every secret", async () => {
    const looping = await sameForEverySecret(LOOPING);
    expect(looping.sink).toContain(`a request went without its value: the function computing it had not answered ${MAP_SETTLE_MS} ms after it was asked for`);
  });

  it("a classified file read back after a classified write of such a map is sent on the same schedule", async () => {
    // The read waits for the write, and the write for the function: read as soon as the write
    // had landed, the request that sent the file waited for the function all the same.
    const header = `(fs.writeClassified(".env.copy", ${LOOPING}), fs.readClassified(".env.copy"))`;
    const looping = await sameForEverySecret(header);
    expect(looping.sink).toContain("a request went without its value");
  });
});
