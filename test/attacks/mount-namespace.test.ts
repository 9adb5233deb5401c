// The sandbox's view of the host's files, closed by the kernel as well as by Deno
// (runner/sandbox-mounts.ts). With the validator bypassed, node:sqlite's native I/O, which no Deno
// permission covers, is the probe: `PRAGMA temp_store_directory` accepted any directory the
// sandbox's user could write, told a script that it existed, and SQLite then created (and unlinked)
// a temporary file there. Where the host makes the namespaces, a canary directory under /tmp and
// one under the user's home are out of the sandbox's and the pure evaluator's view, nothing is
// created in them, and / is read-only; scripts, maps and sessions run as before (test/runner,
// test/cli and the rest of test/attacks run through the same sandbox).

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../runner/config.js";
import { connectServe, createSession, runBypassed, runCli, runInSession, tempDir } from "../helpers.js";
import { commandLineOf, descendantsOf } from "../processes.js";
import { lit, NODE_PRELUDE } from "./fixtures.js";

/** Whether this host lets the test make the namespaces tacit makes (else the sandbox sees the files, and tacit warns). */
const hostMakesMounts = spawnSync("unshare", ["--user", "--map-root-user", "--mount", "--", "/bin/sh", "-c", "/usr/bin/mount -t tmpfs x /mnt"], { stdio: "ignore" }).status === 0;

/** What SQLite says of a directory it may not keep its temporary files in. */
const NOT_WRITABLE = "not a writable directory";

let inTmp: string;
let inHome: string;
beforeAll(() => {
  inTmp = mkdtempSync(path.join(tmpdir(), "tacit-canary-"));
  inHome = mkdtempSync(path.join(homedir(), ".tacit-test-canary-"));
});
afterAll(() => {
  rmSync(inTmp, { recursive: true, force: true });
  rmSync(inHome, { recursive: true, force: true });
});

/** A script that asks SQLite, for each of `dirs`, whether it may keep its temporary files there, and prints what it says. */
function probe(dirs: readonly string[]): string {
  return `${NODE_PRELUDE}const { DatabaseSync } = await import("node:sqlite");
for (const dir of ${JSON.stringify(dirs)}) {
  const db = new DatabaseSync(":memory:");
  try {
    db.exec("PRAGMA temp_store_directory = '" + dir + "'");
    println(dir + ": accepted");
  } catch (error) {
    println(dir + ": " + (error as Error).message);
  }
}`;
}

/** A script that has SQLite spill a temporary table into `dir` (a file made and unlinked at once, then written to). */
function spill(dir: string): string {
  return `${NODE_PRELUDE}const { DatabaseSync } = await import("node:sqlite");
const db = new DatabaseSync(":memory:");
db.exec(${lit(`PRAGMA temp_store_directory = '${dir}'; PRAGMA temp_store = FILE; PRAGMA cache_size = 10; CREATE TEMP TABLE spill(x BLOB)`)});
db.exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 8) INSERT INTO spill SELECT randomblob(1048576) FROM n");
println("spilled");`;
}

/** A directory's change and modification times: making or removing a file in it moves both. */
function stamp(dir: string): string {
  const { ctimeNs, mtimeNs } = statSync(dir, { bigint: true });
  return `${ctimeNs}/${mtimeNs}`;
}

describe.skipIf(!hostMakesMounts)("the sandbox's mount namespace hides the host's files", () => {
  it("a canary directory under /tmp and under the home is no more there to SQLite than one that does not exist", async () => {
    const absent = path.join(inTmp, "does-not-exist");
    const result = await runBypassed(probe([inTmp, inHome, absent]), { keepRuntime: true });
    expect(result.outcome, result.error ?? "").toBe("ok");
    expect(result.stdout.trim().split("\n")).toEqual([`${inTmp}: ${NOT_WRITABLE}`, `${inHome}: ${NOT_WRITABLE}`, `${absent}: ${NOT_WRITABLE}`]);
  });

  it("nor is it there through the host's processes' view (/proc/<tacit's pid>/root)", async () => {
    const throughHost = path.join("/proc", String(process.pid), "root", inTmp);
    const result = await runBypassed(probe([throughHost]), { keepRuntime: true });
    expect(result.outcome, result.error ?? "").toBe("ok");
    expect(result.stdout).toBe(`${throughHost}: ${NOT_WRITABLE}\n`);
  });

  it("/, /var/tmp and /dev/shm are read-only: SQLite may keep no file there", async () => {
    const result = await runBypassed(probe(["/", "/var/tmp", "/dev/shm"]), { keepRuntime: true });
    expect(result.outcome, result.error ?? "").toBe("ok");
    expect(result.stdout.trim().split("\n")).toEqual([`/: ${NOT_WRITABLE}`, `/var/tmp: ${NOT_WRITABLE}`, `/dev/shm: ${NOT_WRITABLE}`]);
  });

  for (const where of ["tmp", "home"] as const) {
    it(`SQLite creates no file in the canary directory under ${where === "tmp" ? "/tmp" : "the home"}`, async () => {
      const dir = where === "tmp" ? inTmp : inHome;
      const before = stamp(dir);
      const result = await runBypassed(spill(dir), { keepRuntime: true });
      expect(result.stdout).not.toContain("spilled");
      expect(result.outcome).toBe("threw");
      expect(result.error).toContain(NOT_WRITABLE);
      expect(stamp(dir)).toBe(before);
    });
  }

  it("a map function in the pure evaluator reaches no file API to look with, and makes no file", async () => {
    const { dir, cleanup } = tempDir("tacit-mounts-sink-");
    try {
      const sink = path.join(dir, "secure-output.txt");
      const before = stamp(inTmp);
      // The pure evaluator's realm reached node:sqlite synchronously (process.getBuiltinModule), once
      // a stand-in answered what node:process asks of the Deno global the evaluator deleted, and
      // its mount namespace showed it none of these directories. Map functions now run in a realm
      // of their own, frozen, with the language's built-ins alone: the stand-in cannot be set.
      const code = `const seen = classify("x").map(() => {
  const stub = (): unknown => new Proxy(function () { return ""; }, { get: (_t, key) => (typeof key === "symbol" || key === "then" ? undefined : stub()) });
  (globalThis as any).Deno = stub();
  const { DatabaseSync } = (globalThis as any).process.getBuiltinModule("node:sqlite");
  const said: string[] = [];
  for (const dir of [${lit(inTmp)}, ${lit(inHome)}, "/"]) {
    try {
      new DatabaseSync(":memory:").exec("PRAGMA temp_store_directory = '" + dir + "'");
      said.push(dir + ": accepted");
    } catch (error) {
      said.push(dir + ": " + (error as Error).message);
    }
  }
  try {
    const db = new DatabaseSync(":memory:");
    db.exec(${lit(`PRAGMA temp_store_directory = '${inTmp}'; PRAGMA temp_store = FILE; PRAGMA cache_size = 10; CREATE TEMP TABLE spill(x BLOB)`)});
    db.exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 8) INSERT INTO spill SELECT randomblob(1048576) FROM n");
    said.push("spilled");
  } catch (error) {
    said.push("spill: " + (error as Error).message);
  }
  return said.join("; ");
});
println("value:", seen);`;
      const result = await runBypassed(code, { config: { library: { ...defaultConfig.library, secureOutput: sink } } });
      expect(result.outcome, result.error ?? "").toBe("ok");
      const written = readFileSync(sink, "utf8");
      expect(written).toContain("value: <classified value unavailable: TypeError: Cannot add property Deno, object is not extensible>");
      expect(stamp(inTmp)).toBe(before);
    } finally {
      cleanup();
    }
  });
});

describe.skipIf(!hostMakesMounts)("with the host's files hidden from it, the sandbox still does its work through the host", () => {
  // The project lies under /tmp, covered in the sandbox's view: the host reads and writes it.
  const code = `const text = requestFileSystem(".", (fs) => fs.access("notes.txt").read());
println("read:", text.trim());
requestFileSystem(".", (fs) => fs.access("out.txt").write(text.toUpperCase()));
println("mapped:", classify(text.trim()).map((t) => t.length));`;

  it("tacit run: a script reads and writes files of a project under /tmp, and a map runs", async () => {
    const { dir, cleanup } = tempDir("tacit-mounts-project-");
    try {
      writeFileSync(path.join(dir, "notes.txt"), "hello from the host\n");
      writeFileSync(path.join(dir, "script.ts"), code);
      const result = await runCli(["run", "--no-check", "--allowed-roots", dir, "script.ts"], { cwd: dir });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe("read: hello from the host\nmapped: Classified(***)\n");
      expect(result.stderr).not.toContain("sees the host's files");
      expect(readFileSync(path.join(dir, "out.txt"), "utf8")).toBe("HELLO FROM THE HOST\n");
    } finally {
      cleanup();
    }
  });

  it("tacit serve: a session keeps its state between snippets and reads the project", async () => {
    const { dir, cleanup } = tempDir("tacit-mounts-serve-");
    writeFileSync(path.join(dir, "notes.txt"), "served\n");
    const client = await connectServe(["--no-check", "--allowed-roots", dir], dir);
    try {
      const session = await createSession(client);
      const first = await runInSession(client, session, 'const kept = requestFileSystem(".", (fs) => fs.access("notes.txt").read().trim());');
      expect(first.error).toBeNull();
      const second = await runInSession(client, session, "println(kept);");
      expect(second.error).toBeNull();
      expect(second.stdout).toBe("served\n");
    } finally {
      await client.close();
      cleanup();
    }
  });
});

/** Two directories in the sandbox's view (not covered) that a test's own mount namespace may mount over. */
const inView = ["/usr/share/doc", "/usr/share/man", "/usr/include", "/usr/share/zoneinfo"].filter((dir) => existsSync(dir));

describe.skipIf(!hostMakesMounts || inView.length < 2)("the mounts in view are those of when each sandbox starts, not of when tacit probed", () => {
  it("under tacit serve, a mount gone since the probe breaks no later sandbox, and one made since is read-only in it", async () => {
    const [gone, made] = inView as [string, string];
    const { dir, cleanup } = tempDir("tacit-mounts-later-");
    // tacit serve in a mount namespace of the test's, with a tmpfs over `gone` as it starts.
    const node = path.join(dir, "node-in-own-mounts.sh");
    const inside = path.join(dir, "mount-then-node.sh");
    writeFileSync(inside, `#!/bin/sh\nmount -t tmpfs tacit-test-gone '${gone}' && exec '${process.execPath}' "$@"\n`, { mode: 0o755 });
    writeFileSync(node, `#!/bin/sh\nexec unshare --user --map-root-user --mount -- '${inside}' "$@"\n`, { mode: 0o755 });
    const client = await connectServe(["--no-check"], dir, { node });
    try {
      const server = (client.transport as unknown as { pid: number | null }).pid!;
      const first = await runInSession(client, await createSession(client), 'println("first");');
      expect(first.stdout, first.error ?? "").toBe("first\n");
      // After the probe and the first sandboxes: `gone` unmounted, a writable tmpfs over `made`.
      const change = spawnSync("nsenter", ["-t", String(server), "-U", "-m", "--preserve-credentials", "--", "/bin/sh", "-c", `umount '${gone}' && mount -t tmpfs -o mode=1777 tacit-test-made '${made}'`], { encoding: "utf8" });
      expect(change.status, change.stderr).toBe(0);
      // The spare started before the change is taken first; the next sandboxes start after it.
      for (const name of ["second", "third"]) {
        const later = await runInSession(client, await createSession(client), `println("${name}");`);
        expect(later.stdout, later.error ?? "").toBe(`${name}\n`);
      }
      // Only those whose Deno runs: a spare still in its setup has not made its mounts yet.
      const sandboxes = descendantsOf(server).filter((pid) => {
        const line = commandLineOf(pid);
        return line.includes("sandbox/bootstrap.js") && line.split("\0")[0]!.endsWith("deno");
      });
      const madeInView = sandboxes
        .map((pid) => readFileSync(`/proc/${pid}/mountinfo`, "utf8").split("\n").find((line) => line.split(" ")[4] === made))
        .filter((line): line is string => line !== undefined);
      expect(madeInView.length, sandboxes.join(" ")).toBeGreaterThan(0);
      for (const line of madeInView) expect(line.split(" ")[5]!.split(","), line).toContain("ro");
    } finally {
      await client.close();
      cleanup();
    }
  });
});

describe.skipIf(!hostMakesMounts)("where the mounts cannot be made but the network namespace can", () => {
  const RAN = "the-script-ran";
  /** tacit started in a mount namespace of the test's, where util-linux `mount` fails as a policy that refuses mounts would. */
  function withMountsRefused(dir: string): string {
    const refusing = path.join(dir, "refusing-mount");
    writeFileSync(refusing, "#!/bin/sh\necho 'mount: permission denied (by the test)' >&2\nexit 32\n", { mode: 0o755 });
    const mount = ["/usr/bin/mount", "/bin/mount"].find((file) => existsSync(file))!;
    const inside = path.join(dir, "bind-then-node.sh");
    writeFileSync(inside, `#!/bin/sh\nmount --bind '${refusing}' '${mount}' && exec '${process.execPath}' "$@"\n`, { mode: 0o755 });
    const node = path.join(dir, "node-without-mounts.sh");
    writeFileSync(node, `#!/bin/sh\nexec unshare --user --map-root-user --mount -- '${inside}' "$@"\n`, { mode: 0o755 });
    return node;
  }

  it("tacit run warns that the sandbox sees the host's files, and runs; --require-network-namespace refuses; --no-network-namespace is silent", async () => {
    const { dir, cleanup } = tempDir("tacit-mounts-refused-");
    try {
      const node = withMountsRefused(dir);
      writeFileSync(path.join(dir, "hello.ts"), `println("${RAN}");`);
      const warned = await runCli(["run", "--no-check", "hello.ts"], { cwd: dir, node });
      expect(warned.code, warned.stderr).toBe(0);
      expect(warned.stdout).toBe(`${RAN}\n`);
      expect(warned.stderr).toContain("the sandbox sees the host's files: its mount namespace could not be made here");
      expect(warned.stderr).toContain("could not set up the sandbox's mounts: could not mount a tmpfs on /tmp: mount: permission denied (by the test)");
      expect(warned.stderr).toContain("--require-network-namespace refuses to run without it");
      // The network namespace it still has is not warned about.
      expect(warned.stderr).not.toContain("the sandbox runs in the host's network namespace");

      const refused = await runCli(["run", "--no-check", "--require-network-namespace", "hello.ts"], { cwd: dir, node });
      expect(refused.code).toBe(2);
      expect(refused.stdout).not.toContain(RAN);
      expect(refused.stderr).toContain("refused, nothing was run: --require-network-namespace");
      expect(refused.stderr).toContain("the mount namespace that hides the host's files from it could not be made here");

      const declined = await runCli(["run", "--no-check", "--no-network-namespace", "hello.ts"], { cwd: dir, node });
      expect(declined.code, declined.stderr).toBe(0);
      expect(declined.stdout).toBe(`${RAN}\n`);
      expect(declined.stderr).not.toContain("sees the host's files");
    } finally {
      cleanup();
    }
  });
});

describe.skipIf(!hostMakesMounts || !existsSync("/usr/bin/mount") || !existsSync("/usr/bin/mountpoint"))("a sandbox whose mounts the host refuses after the probe made them", () => {
  it("tacit run says the host could not make its namespace, in the setup's words, not that the script broke the protocol", async () => {
    const { dir, cleanup } = tempDir("tacit-mounts-later-refused-");
    try {
      // In a mount namespace of the test's: the real mount is reachable at /usr/bin/mountpoint (in view
      // in the sandbox's setup too, where the test's directory is covered), and /usr/bin/mount is a
      // script that lets the first setup (the probe's) through and refuses the tmpfs of every later one.
      const calls = path.join(dir, "setup");
      const fake = path.join(dir, "fake-mount");
      writeFileSync(
        fake,
        `#!/bin/sh\nif [ "$1" = -t ]; then n=1; while ! mkdir '${calls}'-$n 2>/dev/null; do n=$((n + 1)); done\n` +
          `  if [ $n -gt 1 ]; then echo 'mount: permission denied (by the test)' >&2; exit 32; fi\nfi\nexec /usr/bin/mountpoint "$@"\n`,
        { mode: 0o755 },
      );
      const inside = path.join(dir, "bind-then-node.sh");
      writeFileSync(inside, `#!/bin/sh\nmount --bind /usr/bin/mount /usr/bin/mountpoint && mount --bind '${fake}' /usr/bin/mount && exec '${process.execPath}' "$@"\n`, { mode: 0o755 });
      const node = path.join(dir, "node-refused-later.sh");
      writeFileSync(node, `#!/bin/sh\nexec unshare --user --map-root-user --mount -- '${inside}' "$@"\n`, { mode: 0o755 });
      writeFileSync(path.join(dir, "hello.ts"), 'println("the-script-ran");');
      const result = await runCli(["run", "--no-check", "hello.ts"], { cwd: dir, node });
      expect(existsSync(`${calls}-2`), "no sandbox's setup was refused").toBe(true);
      // As a sandbox whose namespace could not be made at its start (runner/evaluate.ts): exit 1.
      expect(result.code, result.stderr).toBe(1);
      expect(result.stdout).not.toContain("the-script-ran");
      expect(result.stderr).toContain("the sandbox could not start: this host could not make its network namespace");
      expect(result.stderr).toContain("could not set up the sandbox's mounts: could not mount a tmpfs on /tmp: mount: permission denied (by the test)");
      expect(result.stderr).toContain("nothing of the script ran");
      expect(result.stderr).not.toContain("the script must not exit the runtime");
    } finally {
      cleanup();
    }
  });
});
