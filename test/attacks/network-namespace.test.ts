// The sandbox's network, closed by the kernel as well as by Deno (runner/network-namespace.ts):
// the sandbox and the pure evaluator of a real `tacit run` are found in a network namespace that
// is not the host's and holds only a loopback that is down; a program started the way they are,
// with every network permission Deno has, cannot connect to a listener on the host's loopback;
// and where no namespace can be made (the kernel's namespace limits set to 0 in a user namespace
// the test makes around tacit), tacit says so, and --require-network-namespace refuses to run.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import net from "node:net";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UNSHARE_CANDIDATES } from "../../runner/exec/pid-namespace.js";
import { bootstrapPath, denoExecutable, pureEvaluatorPath, tscExecutable } from "../../runner/paths.js";
import { sandboxEnv, sandboxLaunch } from "../../runner/sandbox-process.js";
import {
  childEnv,
  type CliResult,
  connectServe,
  createSession,
  repoRoot,
  runBypassed,
  runCli,
  runInSession,
  slowToCheck,
  tacitBin,
  tempDir,
  type ToolResult,
} from "../helpers.js";
import { childrenOf, commandLineOf } from "../processes.js";

/** Whether this host lets the test make the namespaces tacit makes (else tacit warns, tested below). */
const hostMakesNamespaces = spawnSync("unshare", ["--user", "--net", "--", "true"], { stdio: "ignore" }).status === 0;

/** What is said where the sandbox runs in the host's network namespace. */
const WARNING = "the sandbox runs in the host's network namespace";
const REFUSAL = "refused, nothing was run: --require-network-namespace";
/** Printed by a script only if it ran. */
const RAN = "the-script-ran-7c1e";

let work: ReturnType<typeof tempDir>;
beforeEach(() => {
  work = tempDir("tacit-netns-");
});
afterEach(() => work.cleanup());

/** A tacit started with `args`, its stdin left open (the script waits in readInput until `finish`). */
function startTacit(args: string[], options: { wrapper?: string[]; env?: Record<string, string>; bin?: string } = {}): {
  child: ChildProcess;
  finish: (input: string) => Promise<CliResult>;
} {
  const command = [...(options.wrapper ?? []), process.execPath, options.bin ?? tacitBin, ...args];
  const child = spawn(command[0]!, command.slice(1), { cwd: work.dir, env: childEnv(options.env), stdio: ["pipe", "pipe", "pipe"] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout!.on("data", (chunk: Buffer) => out.push(chunk));
  child.stderr!.on("data", (chunk: Buffer) => err.push(chunk));
  const closed = new Promise<CliResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") }));
  });
  return {
    child,
    finish: (input) => {
      child.stdin!.end(input);
      return closed;
    },
  };
}

/** Lets a started tacit's waiting script go on, and checks it ran to its end with no namespace warning. */
async function expectRanWithoutWarning(tacit: ReturnType<typeof startTacit>): Promise<CliResult> {
  const result = await tacit.finish("four");
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toContain(RAN);
  expect(result.stderr).not.toContain(WARNING);
  return result;
}

/** The network (or user) namespace a process is in, as its ns link names it. */
function networkNamespaceOf(pid: number | "self", kind: "net" | "user" = "net"): string {
  return readlinkSync(`/proc/${pid}/ns/${kind}`);
}

interface NetworkSeen {
  namespace: string;
  userNamespace: string;
  interfaces: string[];
  /** /proc/PID/net/fib_trie: the IPv4 routes and addresses of its namespace ("" where there are none). */
  ipv4Routes: string;
  /** /proc/PID/net/if_inet6: its IPv6 addresses (a loopback that is up has ::1). */
  ipv6Addresses: string;
}

/** What /proc shows of the network namespace of `pid` (read from outside: /sys is not per namespace there). */
function networkSeenBy(pid: number): NetworkSeen {
  const dev = readFileSync(`/proc/${pid}/net/dev`, "utf8");
  return {
    namespace: networkNamespaceOf(pid),
    userNamespace: networkNamespaceOf(pid, "user"),
    // Two header lines, then "  name: counters" per interface.
    interfaces: dev.split("\n").slice(2).filter(Boolean).map((line) => line.split(":")[0]!.trim()),
    ipv4Routes: readFileSync(`/proc/${pid}/net/fib_trie`, "utf8"),
    ipv6Addresses: existsSync(`/proc/${pid}/net/if_inet6`) ? readFileSync(`/proc/${pid}/net/if_inet6`, "utf8") : "",
  };
}

/** Whether `pid` runs `deno` on `entry` by now (the wrappers before it name both in their arguments). */
function runsDenoOn(pid: number, entry: string, deno: string): boolean {
  const argv = commandLineOf(pid).split("\0");
  return argv[0] === deno && argv.includes(entry);
}

/**
 * What tacit's child running `entry` (the sandbox's bootstrap or the pure evaluator) shows, found
 * among the direct children of `tacitPid`, or theirs: the pid tacit spawned is the program's own
 * (each wrapper runs the next in its place, unshare before Deno), but for a PID namespace, where
 * unshare forks Deno as its only child (runner/namespaced-program.ts). Read once the process runs
 * Deno, and looked for again if it ends while read (the pure evaluator is replaced after 3 s idle).
 */
async function networkOfChild(tacitPid: number, entry: string, deno = denoExecutable()): Promise<NetworkSeen> {
  for (let attempt = 0; attempt < 400; attempt++) {
    const pid = childrenOf(tacitPid)
      .flatMap((child) => [child, ...childrenOf(child)])
      .find((child) => runsDenoOn(child, entry, deno));
    if (pid !== undefined) {
      try {
        const seen = networkSeenBy(pid);
        if (runsDenoOn(pid, entry, deno)) return seen;
      } catch {
        // Ended while read: look again.
      }
    }
    await sleep(25);
  }
  throw new Error(`no child of tacit (${tacitPid}) running ${entry} was found`);
}

/** A loopback TCP listener that counts the connections it accepts. */
async function countingListener(): Promise<{ port: number; accepted: () => number; nextConnection: () => Promise<void>; close: () => Promise<void> }> {
  let accepted = 0;
  let waiting: (() => void) | null = null;
  const server = net.createServer((socket) => {
    accepted++;
    socket.destroy();
    waiting?.();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    accepted: () => accepted,
    nextConnection: () => new Promise((resolve) => (waiting = resolve)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Deno code with every permission (`deno eval`) that connects to 127.0.0.1:`port` and says how it went. */
function connectCode(port: number): string {
  return `try { (await Deno.connect({ hostname: "127.0.0.1", port: ${port} })).close(); console.log("connected"); } catch (e) { console.log("failed: " + e.name); }`;
}

/** Runs `file args` to its end, with the sandbox's environment, and gives its stdout. */
function runToEnd(file: string, args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(file, args, { env: sandboxEnv(), cwd: "/", encoding: "utf8", timeout: 60_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

const WAITING_SCRIPT = `const doubled = classify("plain").map((value) => value + value);
println("${RAN}", doubled);
println(readInput().length);
`;

describe.runIf(hostMakesNamespaces)("where the host makes network namespaces", () => {
  it("the sandbox and the pure evaluator of `tacit run` are each in a namespace of their own, holding only a loopback that is down", async () => {
    const script = path.join(work.dir, "waits.ts");
    writeFileSync(script, WAITING_SCRIPT);
    const tacit = startTacit(["run", "--no-check", script]);
    try {
      const sandbox = await networkOfChild(tacit.child.pid!, bootstrapPath);
      const evaluator = await networkOfChild(tacit.child.pid!, pureEvaluatorPath);
      const host = networkNamespaceOf("self");
      for (const seen of [sandbox, evaluator]) {
        expect(seen.namespace).not.toBe(host);
        expect(seen.interfaces).toEqual(["lo"]);
        // Down: a loopback that is up has 127.0.0.0/8 in its routes and ::1 as an address.
        expect(seen.ipv4Routes).toBe("");
        expect(seen.ipv6Addresses).toBe("");
      }
      // One each: the evaluator is not in the sandbox's namespace, nor both in a shared one.
      expect(evaluator.namespace).not.toBe(sandbox.namespace);
    } finally {
      const result = await expectRanWithoutWarning(tacit);
      expect(result.stdout).toContain("4");
    }
  });

  it("a program started the way a sandbox is, with every network permission, cannot connect to a listener on the host's loopback", async () => {
    const listener = await countingListener();
    try {
      // The control: the same Deno code, started plainly, connects (so the code and listener work).
      const reached = listener.nextConnection();
      const plain = runToEnd(denoExecutable(), ["eval", connectCode(listener.port)]);
      expect(plain.stdout, plain.stderr).toContain("connected");
      await reached;
      expect(listener.accepted()).toBe(1);

      const { file, args } = sandboxLaunch(denoExecutable(), ["eval", connectCode(listener.port)]);
      const confined = runToEnd(file, args);
      expect(confined.stdout, confined.stderr).toContain("failed: NetworkUnreachable");
      expect(confined.status).toBe(0);
      // Accepted in order: had the confined program connected, its connection would come before this one.
      const after = listener.nextConnection();
      const probe = net.connect(listener.port, "127.0.0.1");
      probe.on("error", () => undefined);
      await after;
      probe.destroy();
      expect(listener.accepted(), "the listener saw a connection from the confined program").toBe(2);
    } finally {
      await listener.close();
    }
  });

  it.runIf(process.geteuid?.() === 0)("as a user without root (uid 65534), the sandbox has a namespace of its own too", async () => {
    const home = path.join(work.dir, "home");
    const script = path.join(work.dir, "waits.ts");
    writeFileSync(script, WAITING_SCRIPT);
    chmodSync(work.dir, 0o755);
    chownSync(work.dir, 65534, 65534);
    const tacit = startTacit(["run", "--no-check", script], {
      wrapper: ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"],
      env: { TACIT_HOME: home, HOME: work.dir },
    });
    try {
      const sandbox = await networkOfChild(tacit.child.pid!, bootstrapPath);
      expect(sandbox.namespace).not.toBe(networkNamespaceOf("self"));
      expect(sandbox.interfaces).toEqual(["lo"]);
      expect(sandbox.ipv4Routes).toBe("");
    } finally {
      await expectRanWithoutWarning(tacit);
    }
  });

  it.runIf(process.geteuid?.() === 0)("as root, where tacit's files cannot be reached from a user namespace, the sandbox gets a network namespace alone", async () => {
    // tacit's package seen under a directory only its owner (uid 65534) may enter, as a `sudo
    // tacit run` from a 0750 home sees it: bind-mounted there, in a mount namespace of tacit's own.
    const locked = path.join(work.dir, "locked");
    const installed = path.join(locked, "pkg");
    mkdirSync(installed, { recursive: true });
    chownSync(locked, 65534, 65534);
    chmodSync(locked, 0o750);
    const script = path.join(work.dir, "waits.ts");
    writeFileSync(script, WAITING_SCRIPT);
    const there = (file: string): string => path.join(installed, path.relative(repoRoot, file));
    const mountThen = 'mount --bind "$1" "$2" && shift 2 && exec "$@"';
    const tacit = startTacit(["run", "--no-check", "--require-network-namespace", script], {
      wrapper: ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", mountThen, "mount", repoRoot, installed],
      bin: there(tacitBin),
    });
    try {
      const sandbox = await networkOfChild(tacit.child.pid!, there(bootstrapPath), there(denoExecutable()));
      expect(sandbox.namespace).not.toBe(networkNamespaceOf("self"));
      expect(sandbox.userNamespace).toBe(networkNamespaceOf("self", "user"));
      expect(sandbox.interfaces).toEqual(["lo"]);
      expect(sandbox.ipv4Routes).toBe("");
    } finally {
      await expectRanWithoutWarning(tacit);
    }
  });
});

/**
 * Runs tacit where no network namespace can be made: inside a user namespace the test makes (tacit
 * is root there), whose kernel limits on user and network namespaces it sets to 0, so that both
 * shapes tacit tries (`unshare --user --net`, and as root `unshare --net`) are refused by the kernel.
 */
function runWithoutNamespaces(args: string[], input = ""): Promise<CliResult> {
  const limits = "echo 0 > /proc/sys/user/max_user_namespaces && echo 0 > /proc/sys/user/max_net_namespaces && exec \"$@\"";
  const tacit = startTacit(args, { wrapper: ["unshare", "--user", "--map-root-user", "--", "/bin/sh", "-c", limits, "limits"] });
  return tacit.finish(input);
}

describe.runIf(hostMakesNamespaces)("where no network namespace can be made (the kernel's limits at 0)", () => {
  it("tacit run says so once, with why and what to do, and runs the script with Deno's permissions alone", async () => {
    const script = path.join(work.dir, "hello.ts");
    writeFileSync(script, `println("${RAN}");`);
    // Independent runs (each its own tacit, in its own user namespace): at once.
    const [result, quiet] = await Promise.all([runWithoutNamespaces(["run", "--no-check", script]), runWithoutNamespaces(["run", "--no-check", "--quiet", script])]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(RAN);
    expect(result.stderr.split(WARNING).length - 1).toBe(1);
    expect(result.stderr).toContain("`unshare --user --net` failed");
    expect(result.stderr).toContain("user.max_user_namespaces");
    expect(result.stderr).toContain("--require-network-namespace refuses to run without it");
    expect(result.stderr).toContain("--no-network-namespace (config networkNamespace: false) runs without it and without this warning");

    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).not.toContain(WARNING);
  });

  it("--require-network-namespace refuses to run, saying why and what to do; the script never runs", async () => {
    const script = path.join(work.dir, "hello.ts");
    writeFileSync(script, `println("${RAN}");`);
    // The config key does the same, and so does serve, before it serves anything.
    const config = path.join(work.dir, "tacit.json");
    writeFileSync(config, JSON.stringify({ requireNetworkNamespace: true }));
    // Independent runs (each its own tacit, in its own user namespace): at once.
    const [refused, json, fromConfig, serve] = await Promise.all([
      runWithoutNamespaces(["run", "--no-check", "--require-network-namespace", script]),
      runWithoutNamespaces(["run", "--no-check", "--json", "--require-network-namespace", script]),
      runWithoutNamespaces(["run", "--no-check", "--config", config, script]),
      runWithoutNamespaces(["serve", "--require-network-namespace"]),
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stdout).not.toContain(RAN);
    expect(refused.stderr).toContain(REFUSAL);
    expect(refused.stderr).toContain("`unshare --user --net` failed");
    expect(refused.stderr).toContain("or drop --require-network-namespace");

    expect(json.code).toBe(2);
    const shown = JSON.parse(json.stdout) as { stdout: string; error: string; outcome: string };
    expect(shown.stdout).toBe("");
    expect(shown.outcome).toBe("usage");
    expect(shown.error).toContain(REFUSAL);

    expect(fromConfig.code).toBe(2);
    expect(fromConfig.stdout).not.toContain(RAN);
    expect(fromConfig.stderr).toContain(REFUSAL);
    expect(serve.code).toBe(2);
    expect(serve.stdout).toBe("");
    expect(serve.stderr).toContain(REFUSAL);
  });
});

/** What a sandbox that could not start for want of a namespace is said to have met (and a script's own exit is not). */
const NO_NAMESPACE_AT_START = "the sandbox could not start: this host could not make its network namespace";
const SCRIPTS_OWN_EXIT = "the script must not exit the runtime";

/**
 * The wrapper to start tacit in, in a mount namespace of the test's, where the unshare tacit finds
 * is replaced by a script that makes the namespaces where `passes` holds (a shell test on $call,
 * which call it is, from 1) and otherwise fails as unshare does past the kernel's limit:
 * deterministic where a real limit depends on when the kernel frees a namespace.
 */
function fakeUnshareWrapper(passes: string, says = "unshare: unshare failed: No space left on device"): string[] {
  const unshare = UNSHARE_CANDIDATES.find((candidate) => existsSync(candidate))!;
  const real = path.join(work.dir, "real-unshare");
  copyFileSync(unshare, real);
  chmodSync(real, 0o755);
  const fake = path.join(work.dir, "fake-unshare");
  // Each call makes the first call-N directory not made yet (mkdir is atomic): that N is its number.
  const calls = path.join(work.dir, "call");
  writeFileSync(
    fake,
    `#!/bin/sh\ncall=1\nwhile ! mkdir '${calls}'-$call 2>/dev/null; do call=$((call + 1)); done\n` +
      `if [ ${passes} ]; then exec '${real}' "$@"; fi\nprintf '%s\\n' '${says.replaceAll("'", "'\\''")}' >&2\nexit 1\n`,
    { mode: 0o755 },
  );
  const bind = 'mount --bind "$1" "$2" && shift 2 && exec "$@"';
  return ["unshare", "--user", "--map-root-user", "--mount", "--", "/bin/sh", "-c", bind, "bind", fake, unshare];
}

/** Whether the fake unshare has been called `calls` times or more. */
function calledAtLeast(calls: number): boolean {
  return existsSync(path.join(work.dir, `call-${calls}`));
}

/** Runs tacit where unshare makes the namespaces for its first `passes` calls, then runs out (see fakeUnshareWrapper). */
async function withUnshareThatRunsOut(passes: number, args: string[], input = "", says?: string): Promise<CliResult> {
  const result = await startTacit(args, { wrapper: fakeUnshareWrapper(`"$call" -le ${passes}`, says) }).finish(input);
  expect(calledAtLeast(passes + 1), "the fake unshare was not called past its passes").toBe(true);
  return result;
}

describe.runIf(hostMakesNamespaces)("a namespace that cannot be made at a sandbox's start, after the probe made one", () => {
  it("under tacit serve, past the kernel's limit on network namespaces, a session's snippet is told it was the host, why and what to do", async () => {
    // tacit serve in a user namespace of the test's, whose limit on network namespaces is 3: the
    // probe makes one (and frees it), and each session's sandbox holds one for as long as it lives.
    const wrapper = path.join(work.dir, "limited-node.sh");
    const limit = 'echo 3 > /proc/sys/user/max_net_namespaces && exec "$@"';
    writeFileSync(wrapper, `#!/bin/sh\nexec unshare --user --map-root-user -- /bin/sh -c '${limit}' limits '${process.execPath}' "$@"\n`, { mode: 0o755 });
    let stderr = "";
    const client = await connectServe(["--no-check"], work.dir, { node: wrapper, onStderr: (text) => (stderr += text) });
    try {
      const results: ToolResult[] = [];
      for (let sessions = 0; sessions < 8 && !results.some((result) => result.exitCode !== 0); sessions++) {
        results.push(await runInSession(client, await createSession(client), `println("${RAN}");`));
      }
      expect(results[0]!.stdout, stderr).toContain(RAN);
      const failed = results.filter((result) => result.exitCode !== 0);
      expect(failed.length, JSON.stringify(results)).toBe(1);
      const { error, stdout } = failed[0]!;
      expect(stdout).toBe("");
      expect(error).toContain(NO_NAMESPACE_AT_START);
      // Why, in unshare's words (with what they mean), and what to do.
      expect(error).toContain("`unshare --user --map-root-user --net --mount` failed: unshare failed: No space left on device (the kernel's limit");
      expect(error).toContain("nothing of the script ran");
      expect(error).toContain("delete_repl_session");
      expect(error).toContain("user.max_net_namespaces");
      expect(error).toContain("--no-network-namespace");
      expect(error).not.toContain(SCRIPTS_OWN_EXIT);
    } finally {
      await client.close();
    }
  });

  it("tacit check, whose type checker cannot get its namespace after the probe, says the host could not make it (exit 2), not an internal error", async () => {
    const script = path.join(work.dir, "fresh.ts");
    // Text no earlier check has passed: the verdict cache would answer without a checker.
    writeFileSync(script, `println("${RAN}-${randomUUID()}");`);
    // The first is the probe's.
    const result = await withUnshareThatRunsOut(1, ["check", "--json", script]);
    expect(result.code, result.stderr).toBe(2);
    const shown = JSON.parse(result.stdout) as { ok: boolean; error: string };
    expect(shown.ok).toBe(false);
    expect(shown.error).toContain("the type checker could not start: this host could not make its network namespace");
    expect(shown.error).toContain("`unshare --user --net` failed: unshare failed: No space left on device");
    expect(shown.error).toContain("the script was neither checked nor run");
    expect(result.stderr).not.toContain("internal error");
  });

  it("unshare's words are quoted as one line, cut, with the controls that would act on a terminal written as escapes", async () => {
    const script = path.join(work.dir, "fresh.ts");
    writeFileSync(script, `println("${RAN}-${randomUUID()}");`);
    // What a locale (or a broken unshare) could say: a terminal title sequence, a long line, a second line.
    const says = `unshare: unshare failed: \u001b]0;owned\u0007No space left on device ${"x".repeat(1000)}\nsecond line`;
    const result = await withUnshareThatRunsOut(1, ["check", "--json", script], "", says);
    expect(result.code, result.stderr).toBe(2);
    const { error } = JSON.parse(result.stdout) as { error: string };
    expect(error).toContain("the type checker could not start: this host could not make its network namespace");
    expect(error).toContain("unshare failed: \\u001b]0;owned\\u0007No space left on device");
    expect(error).not.toContain("\u001b");
    expect(error).not.toContain("\u0007");
    expect(error).toContain("x…");
    expect(error).not.toContain("x".repeat(300));
    expect(error).not.toContain("second line");
  });

  it("tacit repl, whose long-lived checker cannot get its namespace, says the host could not make it (exit 2), not an internal error", async () => {
    const result = await withUnshareThatRunsOut(1, ["repl"], `println("${RAN}-${randomUUID()}")\n`);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stdout).not.toContain(RAN);
    expect(result.stderr).toContain("tacit: the type checker could not start: this host could not make its network namespace");
    expect(result.stderr).toContain("`unshare --user --net` failed: unshare failed: No space left on device");
    expect(result.stderr).not.toContain("internal error");
  });

  it("a pure evaluator that cannot get its namespace: the secure output's note says the host could not make it", async () => {
    const sink = path.join(work.dir, "out", "secure.txt");
    mkdirSync(path.dirname(sink));
    const config = path.join(work.dir, "tacit.json");
    // A config, so that no sandbox is started before the options are read (cli/prestart.ts).
    writeFileSync(config, JSON.stringify({ libraryConfig: { secureOutput: sink } }));
    const script = path.join(work.dir, "maps.ts");
    writeFileSync(script, `println("${RAN}", classify("plain").map((value) => value + value));`);
    // The probe's and the sandbox's pass; the pure evaluator's fails.
    const result = await withUnshareThatRunsOut(2, ["run", "--no-check", "--config", config, script]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(RAN);
    const note = readFileSync(sink, "utf8");
    expect(note).toContain("map failed: the pure evaluator could not start: this host could not make its network namespace");
    expect(note).toContain("No space left on device");
    expect(note).not.toContain("the evaluator exited (1)");
  });

  it("tacit serve does not hand a call the warm spare whose namespace could not be made: the call gets a fresh sandbox", async () => {
    // The probe's call makes the namespaces; the second, the spare the server starts at once, fails; the rest make them.
    const node = path.join(work.dir, "node-with-fake-unshare.sh");
    const wrapper = fakeUnshareWrapper('"$call" -ne 2').map((word) => `'${word.replaceAll("'", `'\\''`)}'`).join(" ");
    writeFileSync(node, `#!/bin/sh\nexec ${wrapper} '${process.execPath}' "$@"\n`, { mode: 0o755 });
    let stderr = "";
    const client = await connectServe(["--no-check"], work.dir, { node, onStderr: (text) => (stderr += text) });
    try {
      const serverPid = (client.transport as unknown as { pid: number | null }).pid!;
      // The spare has failed, and the server has reaped it (it then knows it ended): it has no child left.
      while (!calledAtLeast(2) || childrenOf(serverPid).length > 0) await sleep(25);
      const response = await client.callTool({ name: "execute_typescript", arguments: { code: `println("${RAN}");` } });
      const result = response.structuredContent as unknown as ToolResult;
      expect(result.error, stderr).toBeNull();
      expect(result.stdout).toContain(RAN);
      expect(calledAtLeast(3), "the call's sandbox was not started afresh").toBe(true);
    } finally {
      await client.close();
    }
  });

  it("a script that writes unshare's words to stderr and exits with 1 is not taken for the host's failure", async () => {
    // Deno's stderr and exit, which a script reaches through node:process: the words alone prove nothing.
    const result = await runBypassed(
      'Deno.stderr.writeSync(new TextEncoder().encode("unshare: unshare failed: No space left on device\\n")); Deno.exit(1);',
      { keepRuntime: true },
    );
    expect(result.exitCode).toBe(1);
    expect(result.error).toContain(SCRIPTS_OWN_EXIT);
    expect(result.error).not.toContain("could not make its network namespace");
  });
});

describe.runIf(hostMakesNamespaces)("the type checker, which reads the agent's code, in a network namespace of its own", () => {
  it("tacit check's one-shot checker is in a namespace that is not the host's, holding only a loopback that is down", async () => {
    const script = path.join(work.dir, "slow.ts");
    // About a second of checking (on top of the checker's start): long enough to be found and
    // read while it runs (it is looked for every 25 ms); each more second was CPU spent for nothing.
    writeFileSync(script, slowToCheck(1));
    const tacit = startTacit(["check", "--exec-timeout-ms", "120000", script]);
    try {
      const checker = await networkOfChild(tacit.child.pid!, "-p", tscExecutable());
      expect(checker.namespace).not.toBe(networkNamespaceOf("self"));
      expect(checker.interfaces).toEqual(["lo"]);
      expect(checker.ipv4Routes).toBe("");
      expect(checker.ipv6Addresses).toBe("");
    } finally {
      const result = await tacit.finish("");
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain("slow.ts: ok");
    }
  });

  it("the long-lived checker of tacit repl (and serve: the same thread) is too; with --no-network-namespace it is in the host's", async () => {
    for (const [args, inHosts] of [[[], false], [["--no-network-namespace"], true]] as const) {
      // The repl starts its checker for the first line, and keeps it while it waits for the next.
      const tacit = startTacit(["repl", ...args]);
      tacit.child.stdin!.write(`println("${RAN}")\n`);
      try {
        const checker = await networkOfChild(tacit.child.pid!, "--api", tscExecutable());
        if (inHosts) expect(checker.namespace).toBe(networkNamespaceOf("self"));
        else {
          expect(checker.namespace).not.toBe(networkNamespaceOf("self"));
          expect(checker.interfaces).toEqual(["lo"]);
          expect(checker.ipv4Routes).toBe("");
        }
      } finally {
        const result = await tacit.finish("");
        expect(result.code, result.stderr).toBe(0);
        expect(result.stdout).toContain(RAN);
      }
    }
  });

  it("tacit check applies --require-network-namespace: it refuses where the checker cannot have one, and checks nothing", async () => {
    const script = path.join(work.dir, "hello.ts");
    writeFileSync(script, `println("${RAN}");`);
    // Four independent tacits (none reads what another wrote): started at once, checked in turn.
    const [refused, json, checked, met] = await Promise.all([
      runWithoutNamespaces(["check", "--require-network-namespace", script]),
      runWithoutNamespaces(["check", "--json", "--require-network-namespace", script]),
      runWithoutNamespaces(["check", script]),
      runCli(["check", "--require-network-namespace", script], { cwd: work.dir }),
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("refused, nothing was run: --require-network-namespace (config requireNetworkNamespace) asks that the type checker run");
    expect(refused.stderr).toContain("`unshare --user --net` failed");
    expect(refused.stderr).not.toContain("hello.ts: ok");
    expect(json.code).toBe(2);
    const shown = JSON.parse(json.stdout) as { ok: boolean; error: string };
    expect(shown.ok).toBe(false);
    expect(shown.error).toContain("asks that the type checker run");
    // Without the requirement it checks, and says nothing of the namespace (it runs no script).
    expect(checked.code, checked.stderr).toBe(0);
    expect(checked.stderr).toContain("hello.ts: ok");
    expect(checked.stderr).not.toContain(WARNING);
    // Where one can be made, the requirement is met.
    expect(met.code, met.stderr).toBe(0);
    expect(met.stderr).toContain("hello.ts: ok");
  });
});

/** Said where --no-network-namespace and --require-network-namespace are both given. */
const CONTRADICTION = "contradict each other";
/** A warning of another kind, which --no-network-namespace must leave alone (an incomplete llm config). */
const OTHER_WARNING = "llm config is incomplete";

describe.runIf(hostMakesNamespaces)("--no-network-namespace (config networkNamespace: false): without one, knowingly", () => {
  it("where none can be made, runs the script without the namespace warning, and other warnings are still given", async () => {
    const script = path.join(work.dir, "hello.ts");
    writeFileSync(script, `println("${RAN}");`);
    const config = path.join(work.dir, "tacit.json");
    writeFileSync(config, JSON.stringify({ networkNamespace: false }));
    // The runs are independent of each other (each its own tacit, in its own user namespace): they run at once.
    const [declined, fromConfig, ...servedAndRepl] = await Promise.all([
      runWithoutNamespaces(["run", "--no-check", "--no-network-namespace", "--llm-model", "m", script]),
      runWithoutNamespaces(["run", "--no-check", "--config", config, "--llm-model", "m", script]),
      // serve and repl too (each ends as its standard input does): without a namespace, and warned.
      ...["serve", "repl"].flatMap((command) => [runWithoutNamespaces([command, "--no-network-namespace"]), runWithoutNamespaces([command])]),
    ]);
    expect(declined!.code, declined!.stderr).toBe(0);
    expect(declined!.stdout).toContain(RAN);
    expect(declined!.stderr).not.toContain(WARNING);
    expect(declined!.stderr).toContain(OTHER_WARNING);

    expect(fromConfig!.code, fromConfig!.stderr).toBe(0);
    expect(fromConfig!.stdout).toContain(RAN);
    expect(fromConfig!.stderr).not.toContain(WARNING);
    expect(fromConfig!.stderr).toContain(OTHER_WARNING);

    for (let i = 0; i < servedAndRepl.length; i += 2) {
      const [quietly, warned] = [servedAndRepl[i]!, servedAndRepl[i + 1]!];
      expect(quietly.code, quietly.stderr).toBe(0);
      expect(quietly.stderr).not.toContain(WARNING);
      expect(warned.code, warned.stderr).toBe(0);
      expect(warned.stderr).toContain(WARNING);
    }

    // Never the default: `networkNamespace: true` in a config still warns.
    writeFileSync(config, JSON.stringify({ networkNamespace: true }));
    const kept = await runWithoutNamespaces(["run", "--no-check", "--config", config, script]);
    expect(kept.code, kept.stderr).toBe(0);
    expect(kept.stderr).toContain(WARNING);
  });

  it("where one can be made, the sandbox and the pure evaluator run in the host's network namespace, as asked", async () => {
    const script = path.join(work.dir, "waits.ts");
    writeFileSync(script, WAITING_SCRIPT);
    const tacit = startTacit(["run", "--no-check", "--no-network-namespace", script]);
    try {
      const host = networkNamespaceOf("self");
      expect((await networkOfChild(tacit.child.pid!, bootstrapPath)).namespace).toBe(host);
      expect((await networkOfChild(tacit.child.pid!, pureEvaluatorPath)).namespace).toBe(host);
    } finally {
      await expectRanWithoutWarning(tacit);
    }
  });

  it("beside --require-network-namespace (flag or config, either way) is refused as a contradiction, before anything runs", async () => {
    const script = path.join(work.dir, "hello.ts");
    writeFileSync(script, `println("${RAN}");`);
    const cases: Array<{ args: string[]; config?: object; names: string }> = [
      { args: ["--no-network-namespace", "--require-network-namespace"], names: "--no-network-namespace and --require-network-namespace" },
      { args: ["--no-network-namespace"], config: { requireNetworkNamespace: true }, names: "--no-network-namespace and config requireNetworkNamespace: true" },
      { args: ["--require-network-namespace"], config: { networkNamespace: false }, names: "config networkNamespace: false and --require-network-namespace" },
      { args: [], config: { networkNamespace: false, requireNetworkNamespace: true }, names: "config networkNamespace: false and config requireNetworkNamespace: true" },
    ];
    // Each case has a config file of its own, so that all twelve refusals can be asked for at once.
    const runs = cases.flatMap(({ args, config: file, names }, index) => {
      const config = path.join(work.dir, `tacit-${index}.json`);
      if (file !== undefined) writeFileSync(config, JSON.stringify(file));
      const withConfig = file === undefined ? [] : ["--config", config];
      return [["run", "--no-check", ...withConfig, ...args, script], ["check", ...withConfig, ...args, script], ["serve", ...withConfig, ...args]].map((command) => ({
        command,
        names,
        refused: runCli(command, { cwd: work.dir }),
      }));
    });
    for (const { command, names, refused: running } of runs) {
      const refused = await running;
      expect(refused.code, `${command.join(" ")}: ${refused.stderr}`).toBe(2);
      expect(refused.stdout).toBe("");
      expect(refused.stderr).toContain(`tacit: ${names} ${CONTRADICTION}`);
      expect(refused.stderr).toContain("Give one of them");
    }
  });
});

describe.runIf(!hostMakesNamespaces)("on this host, which makes no network namespace", () => {
  it("tacit run warns and runs; --require-network-namespace refuses; --no-network-namespace runs without the warning", async () => {
    const ran = await runCli(["run", "--no-check", "-"], { input: `println("${RAN}");`, cwd: work.dir });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(RAN);
    expect(ran.stderr).toContain(WARNING);
    const refused = await runCli(["run", "--no-check", "--require-network-namespace", "-"], { input: `println("${RAN}");`, cwd: work.dir });
    expect(refused.code).toBe(2);
    expect(refused.stdout).not.toContain(RAN);
    expect(refused.stderr).toContain(REFUSAL);
    const declined = await runCli(["run", "--no-check", "--no-network-namespace", "-"], { input: `println("${RAN}");`, cwd: work.dir });
    expect(declined.code, declined.stderr).toBe(0);
    expect(declined.stdout).toContain(RAN);
    expect(declined.stderr).not.toContain(WARNING);
  });
});
