// Remembered approvals ($TACIT_HOME/approvals.json): an expired one does not count, a revoked
// one asks again, a granted one lets an unattended run through, and a file others can write
// (or one that is not an approvals file) is not trusted: fail closed, with a message.

import { spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { approvals, deleteScript, onTerminal, storedApprovals, unattended, type World, worlds, writeApprovals } from "./fixtures.js";

// The suites and their tests run concurrently: each test has worlds (and tacit homes) of its own,
// and the lock test spends most of its time waiting (5 s for a lock to be given up, 1 s held).
const world = worlds("tacit-store-", { concurrent: true });

const DAY = 86_400_000;
const iso = (ms: number): string => new Date(ms).toISOString();

/** A world with a.txt, a config making every delete approve-once, and the delete script. */
function deleting(): { w: World; config: string; script: string; pattern: string } {
  const w = world();
  const target = w.file("a.txt");
  return {
    w,
    config: w.config([{ action: "fs.delete", tier: "approve-once" }]),
    script: w.script(deleteScript("a.txt")),
    pattern: `fs.delete ${target}`,
  };
}

describe.concurrent("expiry", () => {
  it("an approval whose expiresAt has passed does not count; `approvals list` shows it as expired", async () => {
    const { w, config, script, pattern } = deleting();
    const now = Date.now();
    writeApprovals(w, [{ pattern, grantedAt: iso(now - 31 * DAY), expiresAt: iso(now - DAY), via: "terminal" }]);
    const run = await unattended(w, ["run", "--config", config, script]);
    expect(run.code, run.all).toBe(1);
    expect(run.stderr).toContain(`${pattern}: refused`);
    expect(w.exists("a.txt")).toBe(true);

    const list = await approvals(w, ["list"]);
    expect(list.code, list.all).toBe(0);
    expect(list.stdout).toContain(`${pattern}\tin ${realpathSync.native(w.work)}\texpired\t`);
    const json = await approvals(w, ["list", "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject([{ pattern, expired: true }]);
  });

  it("the same entry, still live, does count (the control for the test above)", async () => {
    const { w, config, script, pattern } = deleting();
    const now = Date.now();
    writeApprovals(w, [{ pattern, grantedAt: iso(now - DAY), expiresAt: iso(now + DAY), via: "terminal" }]);
    const run = await unattended(w, ["run", "--config", config, script]);
    expect(run.code, run.all).toBe(0);
    expect(run.stdout).toContain("deleted");
    expect(w.exists("a.txt")).toBe(false);
  });

  it("an entry tacit could not have written (until 2100, or granted in the future) does not count; `approvals list` says why", async () => {
    const { w, config, script, pattern } = deleting();
    const now = Date.now();
    const cases = [
      { grantedAt: iso(now - DAY), expiresAt: "2100-01-01T00:00:00.000Z", why: "it would last longer than the 30 days tacit remembers a yes for" },
      { grantedAt: iso(now + 2 * DAY), expiresAt: iso(now + 20 * DAY), why: `granted at a time still to come (${iso(now + 2 * DAY)})` },
    ];
    for (const { grantedAt, expiresAt, why } of cases) {
      writeApprovals(w, [{ pattern, grantedAt, expiresAt, via: "terminal" }]);
      const run = await unattended(w, ["run", "--config", config, script]);
      expect(run.code, run.all).toBe(1);
      expect(run.stderr).toContain(`${pattern}: refused`);
      expect(w.exists("a.txt")).toBe(true);

      const list = await approvals(w, ["list"]);
      expect(list.stdout).toContain(`${pattern}\tin ${realpathSync.native(w.work)}\tnot used: ${why}; tacit never writes such an entry`);
      const json = await approvals(w, ["list", "--json"]);
      expect(JSON.parse(json.stdout)).toMatchObject([{ pattern, notUsed: why }]);
    }
    // A yes replaces it with an entry tacit uses.
    const run = await onTerminal(w, ["run", "--config", config, script], { answers: ["y"] });
    expect(run.prompts, run.all).toBe(1);
    expect(w.exists("a.txt")).toBe(false);
    const stored = storedApprovals(w)!;
    expect(stored).toHaveLength(1);
    expect(Date.parse(stored[0]!.expiresAt) - Date.parse(stored[0]!.grantedAt)).toBe(30 * DAY);
  });

  it("an approval holds only in the working directory it was given in", async () => {
    const { w, config, script, pattern } = deleting();
    const now = Date.now();
    const elsewhere = path.dirname(realpathSync.native(w.work));
    writeApprovals(w, [{ pattern, directory: elsewhere, grantedAt: iso(now - DAY), expiresAt: iso(now + DAY), via: "terminal" }]);
    const run = await unattended(w, ["run", "--config", config, script]);
    expect(run.code, run.all).toBe(1);
    expect(run.stderr).toContain("in this directory");
    expect(w.exists("a.txt")).toBe(true);
    // Granted here, it holds here; `list` says where.
    const granted = await approvals(w, ["grant", pattern]);
    expect(granted.code, granted.all).toBe(0);
    const listed = await approvals(w, ["list"]);
    expect(listed.stdout).toContain(`${pattern}\tin ${realpathSync.native(w.work)}\t`);
    expect(listed.stdout).toContain(`${pattern}\tin ${elsewhere}\t`);
    const again = await unattended(w, ["run", "--config", config, script]);
    expect(again.code, again.all).toBe(0);
    expect(w.exists("a.txt")).toBe(false);
  });

  it("a yes on the terminal replaces an expired entry with a fresh 30-day one", async () => {
    const { w, config, script, pattern } = deleting();
    const now = Date.now();
    writeApprovals(w, [{ pattern, grantedAt: iso(now - 31 * DAY), expiresAt: iso(now - DAY), via: "terminal" }]);
    const run = await onTerminal(w, ["run", "--config", config, script], { answers: ["y"] });
    expect(run.code, run.all).toBe(0);
    expect(run.prompts).toBe(1);
    const stored = storedApprovals(w)!;
    expect(stored).toHaveLength(1);
    expect(Date.parse(stored[0]!.expiresAt)).toBeGreaterThan(now + 29 * DAY);
  });
});

describe.concurrent("grant and revoke", () => {
  it("grant lets an unattended run through; revoke makes the next run ask again (refused without a terminal)", async () => {
    const { w, config, script, pattern } = deleting();
    const granted = await approvals(w, ["grant", pattern]);
    expect(granted.code, granted.all).toBe(0);
    expect(granted.stderr).toContain(`approved ${pattern} in ${realpathSync.native(w.work)} until`);
    expect(storedApprovals(w)).toMatchObject([{ pattern, via: "tacit approvals grant" }]);
    // Owner-only file in an owner-only home.
    expect(statSync(w.approvalsFile).mode & 0o777).toBe(0o600);
    expect(statSync(w.home).mode & 0o777).toBe(0o700);

    const run = await unattended(w, ["run", "--config", config, script]);
    expect(run.code, run.all).toBe(0);
    expect(w.exists("a.txt")).toBe(false);

    const revoked = await approvals(w, ["revoke", pattern]);
    expect(revoked.code, revoked.all).toBe(0);
    expect(revoked.stderr).toContain(`revoked ${pattern}`);
    expect(storedApprovals(w)).toEqual([]);

    w.file("a.txt");
    const refused = await unattended(w, ["run", "--config", config, script]);
    expect(refused.code, refused.all).toBe(1);
    expect(refused.stderr).toContain(`${pattern}: refused`);
    expect(w.exists("a.txt")).toBe(true);
    // With a terminal, the person is asked again.
    const asked = await onTerminal(w, ["run", "--config", config, script], { answers: ["n"] });
    expect(asked.prompts).toBe(1);
    expect(asked.code, asked.all).toBe(1);
    expect(w.exists("a.txt")).toBe(true);
  });

  it("grant refuses a pattern tacit never asks about, saying what is wrong with it, and grants none of those given", async () => {
    // "exe git push" was remembered as granted and never matched: the unattended run it was for was refused.
    const { w, pattern } = deleting();
    for (const [bad, why] of [
      ["exe git push", 'it does not begin with a kind of action tacit asks about (fs.read, fs.stat, fs.write, fs.delete, fs.mkdir, fs.readClassified, fs.writeClassified, fs.open, exec, net, chat, extend exec, extend net, extend fs.open); did you mean "exec"? Copy it exactly'],
      ["fs.wrte /etc/x", 'did you mean "fs.write"?'],
      ["exec", 'it names no command after "exec".'],
      ["net", 'it names no request after "net".'],
      ["fs.delete", 'it names no path after "fs.delete".'],
      ["extend exec", 'it names no command after "extend exec".'],
      [" exec git push *", "it is empty or begins or ends with a space."],
    ] as const) {
      const refused = await approvals(w, ["grant", pattern, bad]);
      expect(refused.code, refused.all).toBe(2);
      expect(refused.stderr).toContain(`"${bad}" is not a pattern tacit asks about: `);
      expect(refused.stderr).toContain(why);
      expect(storedApprovals(w) ?? []).toEqual([]);
    }
    const granted = await approvals(w, ["grant", pattern, "exec git push *", "net POST api.example.com", "chat", "chat classified", "extend exec git", "extend net api.example.com"]);
    expect(granted.code, granted.all).toBe(0);
    expect(storedApprovals(w)).toHaveLength(7);
  });

  it("revoke --all forgets everything; revoking an unknown pattern says so (exit 1); revoke with nothing named is a usage error", async () => {
    const { w, config, script, pattern } = deleting();
    expect((await approvals(w, ["grant", pattern, "exec git push *", "net POST api.example.com"])).code).toBe(0);
    expect(storedApprovals(w)!.map((a) => a.pattern).sort()).toEqual(["exec git push *", pattern, "net POST api.example.com"].sort());

    const unknown = await approvals(w, ["revoke", "exec git push *", "exec rm *"]);
    expect(unknown.code, unknown.all).toBe(1);
    expect(unknown.stderr).toContain("revoked exec git push *");
    expect(unknown.stderr).toContain("no remembered approval for: exec rm *");
    expect(storedApprovals(w)!.map((a) => a.pattern).sort()).toEqual([pattern, "net POST api.example.com"].sort());

    const none = await approvals(w, ["revoke"]);
    expect(none.code, none.all).toBe(2);
    expect(none.stderr).toContain("--all");

    const all = await approvals(w, ["revoke", "--all"]);
    expect(all.code, all.all).toBe(0);
    expect(all.stderr).toContain("revoked 2 approvals");
    expect(storedApprovals(w)).toEqual([]);
    const list = await approvals(w, ["list"]);
    expect(list.stdout).toBe("");
    expect(list.stderr).toContain("no remembered approvals");

    const refused = await unattended(w, ["run", "--config", config, script]);
    expect(refused.code, refused.all).toBe(1);
    expect(w.exists("a.txt")).toBe(true);
  });

  it("grant refuses a pattern with stray whitespace (it would never match)", async () => {
    const w = world();
    const bad = await approvals(w, ["grant", " fs.delete /x "]);
    expect(bad.code, bad.all).toBe(2);
    expect(bad.stderr).toContain("is not a pattern");
    expect(storedApprovals(w)).toBeNull();
  });
});

describe.concurrent("an approvals file that cannot be trusted fails closed", () => {
  for (const [label, mode] of [["group-writable", 0o620], ["world-writable", 0o602]] as const) {
    it(`${label}: its live approval does not count, and the refusal says why`, async () => {
      const { w, config, script, pattern } = deleting();
      const now = Date.now();
      writeApprovals(w, [{ pattern, grantedAt: iso(now), expiresAt: iso(now + DAY), via: "terminal" }], mode);
      expect(statSync(w.approvalsFile).mode & 0o777).toBe(mode);
      const run = await unattended(w, ["run", "--config", config, script]);
      expect(run.code, run.all).toBe(1);
      expect(run.stderr).toContain(`${pattern}: refused`);
      expect(run.stderr).toContain("can be written by others");
      expect(w.exists("a.txt")).toBe(true);

      const list = await approvals(w, ["list"]);
      expect(list.code, list.all).toBe(2);
      expect(list.stderr).toContain("can be written by others");
      const grant = await approvals(w, ["grant", "exec ls"]);
      expect(grant.code, grant.all).toBe(2);
      // The untrusted file was left as it was.
      expect(statSync(w.approvalsFile).mode & 0o777).toBe(mode);
    });
  }

  // A thirteenth security review: the approvals file was checked for its mode only (by a stat
  // that followed links), and tacit's home not at all, so another user (or a link) could plant
  // approvals that let an unattended run through. Now it is read as the audit key is: O_NOFOLLOW,
  // a regular file of the user's that nobody else can write, in a home that is the user's.
  const OTHER_USER = 65534; // nobody
  const asRoot = typeof process.getuid === "function" && process.getuid() === 0;
  const planted: Array<[string, boolean, (w: World) => void, RegExp]> = [
    ["a link to a file elsewhere (yours, 600)", true, (w) => {
      const elsewhere = path.join(path.dirname(w.home), "planted.json");
      renameSync(w.approvalsFile, elsewhere);
      symlinkSync(elsewhere, w.approvalsFile);
    }, /approvals file .*approvals\.json is a symbolic link, so its approvals are not trusted .*remove it \(rm /],
    ["a file of another user", asRoot, (w) => chownSync(w.approvalsFile, OTHER_USER, OTHER_USER), /approvals\.json belongs to another user \(uid 65534\), so its approvals are not trusted; remove it, or chown /],
    ["a home of another user", asRoot, (w) => chownSync(w.home, OTHER_USER, OTHER_USER), /lies in .*home, which belongs to another user \(uid 65534\), so its approvals are not trusted; set TACIT_HOME to a directory of your own/],
    ["a home others can write", true, (w) => chmodSync(w.home, 0o777), /lies in .*home, which others can write to \(mode 777\).*chmod go-w /],
  ];
  for (const [label, possible, plant, message] of planted) {
    it.skipIf(!possible)(`${label}: its live approval does not count, and the refusal names the file and the fix`, async () => {
      const { w, config, script, pattern } = deleting();
      const now = Date.now();
      writeApprovals(w, [{ pattern, grantedAt: iso(now), expiresAt: iso(now + DAY), via: "terminal" }]);
      plant(w);
      const run = await unattended(w, ["run", "--config", config, script]);
      expect(w.exists("a.txt"), "the planted approval let the delete through").toBe(true);
      expect(run.code, run.all).toBe(1);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).toContain(`${pattern}: refused`);
      const list = await approvals(w, ["list"]);
      expect(list.code, list.all).toBe(2);
      expect(list.stderr).toMatch(message);
    });
  }

  it("not JSON, or not an approvals file: refused with a message", async () => {
    const { w, config, script } = deleting();
    writeApprovals(w, []);
    writeFileSync(w.approvalsFile, "{ not json");
    const run = await unattended(w, ["run", "--config", config, script]);
    expect(run.code, run.all).toBe(1);
    expect(run.stderr).toContain("is not valid JSON");
    expect(w.exists("a.txt")).toBe(true);

    writeFileSync(w.approvalsFile, JSON.stringify({ version: 2, approvals: [] }));
    const shape = await unattended(w, ["run", "--config", config, script]);
    expect(shape.code, shape.all).toBe(1);
    expect(shape.stderr).toContain("is not an approvals file");
    expect(w.exists("a.txt")).toBe(true);
  });

  it("a damaged file is refused before anyone is asked, even with a terminal", async () => {
    const { w, config, script } = deleting();
    writeApprovals(w, []);
    writeFileSync(w.approvalsFile, "{ not json");
    const run = await onTerminal(w, ["run", "--config", config, script], { answers: ["y"] });
    // The lookup fails first: fail closed without asking.
    expect(run.prompts).toBe(0);
    expect(run.code, run.all).toBe(1);
    expect(w.exists("a.txt")).toBe(true);
  });
});

describe.concurrent("concurrent changes", () => {
  // Without the lock, a revoke and a yes remembered by another tacit at the same moment could
  // undo each other: each read the file, changed its copy, and wrote it whole, so the later
  // write put back an approval the earlier one had revoked.
  it("a change waits while another live process holds the approvals lock, and gives up with a message after 5 s", async () => {
    const { w } = deleting();
    expect((await approvals(w, ["grant", "exec git push *"])).code).toBe(0);
    const lock = `${w.approvalsFile}.lock`;
    const holder = spawn("sleep", ["60"], { stdio: "ignore" });
    try {
      writeFileSync(lock, `${holder.pid}\n`);
      const refused = await approvals(w, ["revoke", "exec git push *"]);
      expect(refused.code, refused.all).not.toBe(0);
      expect(refused.stderr).toContain(`process ${holder.pid} holds it`);
      expect(refused.stderr).toContain("nothing was changed");
      expect(storedApprovals(w)!.map((a) => a.pattern)).toEqual(["exec git push *"]);

      const waiting = approvals(w, ["revoke", "exec git push *"]);
      await sleep(1000);
      expect(storedApprovals(w)!.map((a) => a.pattern), "changed while another process held the lock").toEqual(["exec git push *"]);
      rmSync(lock);
      const revoked = await waiting;
      expect(revoked.code, revoked.all).toBe(0);
      expect(storedApprovals(w)).toEqual([]);
      expect(existsSync(lock)).toBe(false);
    } finally {
      holder.kill();
    }
  });

  it("a lock left by a process that is gone is taken over", async () => {
    const { w } = deleting();
    expect((await approvals(w, ["grant", "exec git push *"])).code).toBe(0);
    const gone = spawnSync("true").pid;
    writeFileSync(`${w.approvalsFile}.lock`, `${gone}\n`);
    const revoked = await approvals(w, ["revoke", "exec git push *"]);
    expect(revoked.code, revoked.all).toBe(0);
    expect(storedApprovals(w)).toEqual([]);
    expect(existsSync(`${w.approvalsFile}.lock`)).toBe(false);
  });
});
