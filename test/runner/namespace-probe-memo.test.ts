// The network-namespace probe's success, remembered in tacit's home (runner/namespace-probe-memo.ts):
// a note that no longer holds must never let a sandbox run weaker than a probe would find, nor
// run it at all. Here the namespaces tacit makes are used up after a run noted that they worked
// (in a user namespace the test makes, whose limit on network namespaces is 2, both held by two
// other processes), with nothing in the note's key changed: the next run's sandbox fails to start,
// nothing of the script runs, the host says why and what to do, and the note is forgotten; the run
// after probes, finds no namespace, warns, and runs. A note others could read or write is not used.

import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { childEnv, tacitBin, tempDirWithHome } from "../helpers.js";

const hostMakesNamespaces = spawnSync("unshare", ["--user", "--net", "--", "true"], { stdio: "ignore" }).status === 0;
const RAN = "the-script-ran-5d02";
const WARNING = "the sandbox runs in the host's network namespace";

type Work = ReturnType<typeof tempDirWithHome>;

/** A directory and tacit home of the test's own, removed after it (the test's own hook: the tests run concurrently). */
function workOfTest(context: TestContext): Work {
  const work = tempDirWithHome("tacit-probe-memo-");
  context.onTestFinished(work.cleanup);
  return work;
}

/**
 * In a user namespace of its own (tacit is root there) whose limit on network namespaces is 2:
 * one run with both free, then `between` (shell), then two runs while two other processes hold
 * both. Each run's exit status and output go to files named by its number.
 */
function scenario(work: Work, between: string): Promise<{ code: number | null; stderr: string }> {
  const script = path.join(work.dir, "hello.ts");
  writeFileSync(script, `println("${RAN}");`);
  const tacit = `"${process.execPath}" "${tacitBin}" run --no-check "${script}"`;
  const out = (n: number) => `> "${work.dir}/out${n}" 2> "${work.dir}/err${n}"; echo $? > "${work.dir}/code${n}"`;
  const shell = [
    "echo 2 > /proc/sys/user/max_net_namespaces",
    `${tacit} ${out(1)}`,
    between,
    // Two holders take both namespaces, each known to hold one once it has written its mark from
    // inside; a namespace of an ended run is freed a little after it ends, so each is retried.
    "alive() { [ -r /proc/$1/stat ] && ! grep -q ') Z ' /proc/$1/stat; }",
    "holders=''",
    `for n in 1 2; do for try in $(seq 200); do mark="${work.dir}/held$n-$try"; unshare --net /bin/sh -c 'touch "$0"; exec sleep 60' "$mark" & pid=$!; ` +
      `while alive $pid && [ ! -e "$mark" ]; do sleep 0.02; done; if [ -e "$mark" ]; then holders="$holders $pid"; break; fi; wait $pid; sleep 0.05; done; done`,
    `echo "$holders" | wc -w > "${work.dir}/holders"`,
    `${tacit} ${out(2)}`,
    `${tacit} ${out(3)}`,
    "kill $holders",
  ].join("\n");
  const child = spawn("unshare", ["--user", "--map-root-user", "--", "/bin/sh", "-c", shell], { env: childEnv(work.env), stdio: ["ignore", "ignore", "pipe"] });
  const err: Buffer[] = [];
  child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr: Buffer.concat(err).toString() }));
  });
}

const readIn = (work: Work) => (name: string): string => spawnSync("cat", [path.join(work.dir, name)], { encoding: "utf8" }).stdout;

describe.runIf(hostMakesNamespaces).concurrent("the probe's remembered success", () => {
  it("fails closed when it no longer holds, says why, and is forgotten; the next run probes, warns and runs", async (context) => {
    const work = workOfTest(context);
    const read = readIn(work);
    const note = () => path.join(work.home, "namespace-probe");
    const ended = await scenario(work, `[ -e "${note()}" ] && echo noted > "${work.dir}/noted"`);
    expect(ended.code, ended.stderr).toBe(0);
    // The first run probed, ran in its namespaces and noted it.
    expect(read("code1").trim(), read("err1")).toBe("0");
    expect(read("out1")).toContain(RAN);
    expect(read("noted")).toContain("noted");
    expect(read("holders").trim()).toBe("2");
    // The second started on the note, could not make its namespace: nothing ran, and the host says so.
    expect(read("code2").trim()).not.toBe("0");
    expect(read("out2")).not.toContain(RAN);
    expect(read("err2")).toContain("could not make its network namespace");
    expect(read("err2")).toContain("--no-network-namespace");
    expect(read("err2")).not.toContain(WARNING);
    // The third probed afresh, found none, warned, and ran (as every run did before the note).
    expect(read("code3").trim(), read("err3")).toBe("0");
    expect(read("out3")).toContain(RAN);
    expect(read("err3")).toContain(WARNING);
    expect(existsSync(note())).toBe(false);
  });

  it("is not used where others may read or write it: the run probes, warns and runs", async (context) => {
    const work = workOfTest(context);
    const read = readIn(work);
    const note = path.join(work.home, "namespace-probe");
    const ended = await scenario(work, `chmod 644 "${note}"`);
    expect(ended.code, ended.stderr).toBe(0);
    expect(read("code1").trim(), read("err1")).toBe("0");
    expect(read("holders").trim()).toBe("2");
    expect(read("code2").trim(), read("err2")).toBe("0");
    expect(read("out2")).toContain(RAN);
    expect(read("err2")).toContain(WARNING);
    chmodSync(note, 0o600);
  });
});
