// ClassifiedPaths pattern semantics, unit level: gitignore-like patterns, matched against
// absolute paths, a path classified if it or an ancestor matches.

import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import picomatch from "picomatch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { caseFolded } from "../../runner/fs/case-folding.js";
import { ClassifiedPaths, DEFAULT_CLASSIFIED_PATHS } from "../../runner/fs/classified-paths.js";
import { resolveReal } from "../../runner/fs/containment.js";
import { withCaretNegation, withLiteralGroups } from "../../runner/fs/glob-classes.js";
import { realTempDir } from "./fixtures.js";

/** Each path → whether `patterns` classify it. */
function expectMatches(patterns: string[], cases: Record<string, boolean>): void {
  const classified = new ClassifiedPaths(patterns);
  const actual = Object.fromEntries(Object.keys(cases).map((p) => [p, classified.matches(p)]));
  expect(actual, `patterns ${JSON.stringify(patterns)}`).toEqual(cases);
}

describe("patterns without a slash match any path component", () => {
  it(".env", () => {
    expectMatches([".env"], {
      "/.env": true,
      "/a/.env": true,
      "/a/b/c/.env": true,
      "/a/.env/x": true,
      "/a/.env/x/y.txt": true,
      "/a/.envrc": false,
      "/a/x.env": false,
      "/a/.env.local": false,
      "/a/b": false,
    });
  });

  it(".env.* and *.pem (globs within a component; dotfiles included)", () => {
    expectMatches([".env.*", "*.pem"], {
      "/a/.env.local": true,
      "/a/.env.production/x": true,
      "/a/.env": false,
      "/a/b/key.pem": true,
      "/a/.hidden.pem": true,
      "/a/pem": false,
      "/a/key.pem.bak": false,
    });
  });

  it("a trailing slash is dropped", () => {
    expectMatches([".ssh/"], { "/home/u/.ssh": true, "/home/u/.ssh/id_rsa": true, "/home/u/ssh": false });
  });

  it("a name pattern also matches its own text exactly, as picomatch does ([id] is a class and a name)", () => {
    expectMatches(["[id]", ".env"], { "/a/[id]": true, "/a/i": true, "/a/d/x": true, "/a/x": false, "/a/.env": true, "/a/[id]x": false });
  });

  it("only anchored patterns: no name is classified by them", () => {
    expectMatches(["srv/*/keys"], { "/srv/a/keys": true, "/a/keys": false, "/a/.env": false, "/a/b": false });
  });

  it("blank patterns match nothing", () => {
    expectMatches(["", "   "], { "/a": false, "/": false, "/.env": false });
  });
});

describe("relative patterns with a slash are anchored at the filesystem root", () => {
  it("tmp/*/secret", () => {
    expectMatches(["tmp/*/secret"], {
      "/tmp/x/secret": true,
      "/tmp/x/secret/deeper/file": true,
      "/tmp/x/y/secret": false,
      "/other/tmp/x/secret": false,
      "/tmp/secret": false,
    });
  });

  it("srv/**/keys", () => {
    expectMatches(["srv/**/keys"], {
      "/srv/keys": true,
      "/srv/a/b/keys": true,
      "/srv/a/b/keys/k.pem": true,
      "/x/srv/a/keys": false,
      "/srv/a/keysx": false,
    });
  });
});

describe("a relative pattern with a slash, given to the CLI", () => {
  // Easy to mistake for one relative to the project (a security review did): tacit says so.
  it("gets a warning that says where it is anchored and how to match under the project", async () => {
    const { runScript } = await import("../helpers.js");
    const r = await runScript("println(1);", ["--classified-paths", "config/credentials.json,**/keys,.env,/abs/secret"]);
    expect(r.code, r.stderr).toBe(0);
    const warnings = r.stderr.split("\n").filter((line) => line.startsWith("tacit: warning: classified path"));
    expect(warnings).toEqual([
      'tacit: warning: classified path "config/credentials.json" is anchored at the filesystem root (it matches /config/credentials.json, not a path under the working directory); write "**/config/credentials.json" to match it under any directory, or give the absolute path',
    ]);
  });
});

describe("absolute patterns match the full path", () => {
  it("with **, ?, [...]", () => {
    expectMatches(["/data/**/*.key"], {
      "/data/a.key": true,
      "/data/a/b/c.key": true,
      "/data/a/b/c.key/inside": true,
      "/other/data/a.key": false,
      "/data/a.keys": false,
    });
    expectMatches(["/data/file?.txt"], { "/data/file1.txt": true, "/data/fileA.txt": true, "/data/file12.txt": false, "/data/file.txt": false });
    expectMatches(["/data/[ab]-*.txt"], { "/data/a-1.txt": true, "/data/b-2.txt": true, "/data/c-1.txt": false });
  });

  it("an ancestor's match classifies everything below it, by whole components", () => {
    expectMatches(["/data/secret/"], {
      "/data/secret": true,
      "/data/secret/a/b": true,
      "/data/secretive": false,
      "/data/secretive/x": false,
      "/data": false,
    });
  });

  it("several path patterns, anchored and absolute, each as it would alone (they are tried as one expression)", () => {
    const patterns = ["srv/*/keys", "/data/**/*.key", "opt/[ab]/x", "/etc/[id]", "**/.config/gh"];
    const cases = {
      "/srv/a/keys": true,
      "/srv/a/b/keys": false,
      "/data/a/b.key": true,
      "/x/data/b.key": false,
      "/opt/a/x": true,
      "/opt/c/x": false,
      // A path pattern's own text matches too, as picomatch's exact-text match has it.
      "/opt/[ab]/x": true,
      "/etc/[id]": true,
      "/etc/i": true,
      "/etc/x": false,
      "/home/u/.config/gh/hosts.yml": true,
      "/home/u/.config/ghx": false,
      "/": false,
    };
    expectMatches(patterns, cases);
    // Each path is classified by the set exactly when one pattern alone classifies it.
    const alone = patterns.map((pattern) => new ClassifiedPaths([pattern]));
    expectMatches(patterns, Object.fromEntries(Object.keys(cases).map((p) => [p, alone.some((one) => one.matches(p))])));
  });

  it("a pattern is tried only on paths ending in its last component when that is plain text, and answers as picomatch alone does", () => {
    // The joined tests skip a pattern whose last component is plain text for a path that does
    // not end in it. Any character of glob syntax in the last component (or a "/" hidden in a
    // class, a brace or an escape) makes the pattern tried on every path, as before.
    const patterns = [
      "**/.config/gh", "srv/*/keys", "/data/x.y/secret-1_a", "/data/**/tok", "a/..", "a/.", "/d/...",
      "/e/{k,k/z}", "/e/[/]z", "/e/b\\/c", "/f/@(x|y/z)", "/g/k*", "/h/*", "/i/**", "/j/?x", "/l/(m|n/o)", "/p/q+", "/r/!s",
    ];
    const paths = [
      "/home/u/.config/gh", "/home/u/.config/ghx", "/srv/a/keys", "/srv/a/keysx", "/data/x.y/secret-1_a", "/data/xay/secret-1_a",
      "/data/a/b/tok", "/data/tok", "/a/..", "/a", "/a/.", "/d/...", "/d/..", "/e/k", "/e/k/z", "/e/z", "/e//z", "/e/b/c", "/e/b\\c",
      "/f/x", "/f/y/z", "/f/z", "/g/k", "/g/kk", "/h/anything", "/i/a/b/c", "/j/ax", "/l/m", "/l/n/o", "/l/o", "/l/(m|n/o)",
      "/p/qq", "/p/q+", "/r/t", "/r/!s", "/r/s",
    ];
    const options = { dot: true, flags: "s" } as const;
    const readings = (pattern: string): string[] => [withCaretNegation(pattern), withLiteralGroups(pattern)].filter((p): p is string => p !== null);
    const alone = (pattern: string, p: string): boolean =>
      pattern === (pattern.startsWith("/") ? p : p.slice(1)) ||
      readings(pattern).some((reading) => picomatch(reading, options)(pattern.startsWith("/") ? p : p.slice(1)));
    const classified = new ClassifiedPaths(patterns);
    const actual = Object.fromEntries(paths.map((p) => [p, classified.matchesExactly(p)]));
    const expected = Object.fromEntries(paths.map((p) => [p, patterns.some((pattern) => alone(pattern, p))]));
    expect(actual).toEqual(expected);
    // Not vacuous: plain and glob last components both classify some of the paths.
    expect(["/home/u/.config/gh", "/data/a/b/tok", "/e/k/z", "/g/kk"].map((p) => actual[p])).toEqual([true, true, true, true]);
  });

  describe("with a symlinked prefix", () => {
    let dir: string;
    let cleanup: () => void;
    beforeAll(() => {
      ({ dir, cleanup } = realTempDir("tacit-files-patterns-"));
      mkdirSync(path.join(dir, "real/vault"), { recursive: true });
      symlinkSync(path.join(dir, "real"), path.join(dir, "link"));
    });
    afterAll(() => cleanup());

    it("resolves the pattern's non-glob prefix, so the real path matches", () => {
      const classified = new ClassifiedPaths([`${dir}/link/vault/*.txt`]);
      expect(classified.matches(`${dir}/real/vault/a.txt`)).toBe(true);
      expect(classified.matches(`${dir}/real/vault/a.md`)).toBe(false);
      expect(classified.matches(`${dir}/real/other/a.txt`)).toBe(false);
    });

    it("classifies a path named through a link when its real location matches", () => {
      const classified = new ClassifiedPaths([`${dir}/real/vault`]);
      const named = `${dir}/link/vault/key.txt`;
      expect(classified.isClassified(named, resolveReal(named))).toBe(true);
      expect(classified.isClassified(`${dir}/link/other.txt`, resolveReal(`${dir}/link/other.txt`))).toBe(false);
    });
  });
});

describe("the defaults", () => {
  it("cover the usual secret stores", () => {
    expectMatches([...DEFAULT_CLASSIFIED_PATHS], {
      "/home/u/.ssh/id_ed25519": true,
      "/home/u/.gnupg/pubring.kbx": true,
      "/app/.env": true,
      "/app/.env.local": true,
      "/home/u/.netrc": true,
      "/home/u/.npmrc": true,
      "/home/u/.pypirc": true,
      "/home/u/.docker/config.json": true,
      "/home/u/.kube/config": true,
      "/home/u/.aws/credentials": true,
      "/home/u/.azure/x": true,
      "/home/u/.gcloud/x": true,
      "/home/u/.git-credentials": true,
      "/home/u/.pgpass": true,
      "/home/u/.my.cnf": true,
      "/home/u/.vault-token": true,
      "/home/u/.terraformrc": true,
      "/home/u/.config/gcloud/credentials.db": true,
      "/home/u/.config/gcloud/legacy_credentials/me@example.com/adc.json": true,
      "/home/u/.config/gh/hosts.yml": true,
      "/home/u/.cargo/credentials.toml": true,
      "/home/u/.cargo/credentials": true,
      "/home/u/.claude/.credentials.json": true,
      "/home/u/.codex/auth.json": true,
      "/home/u/.gemini/oauth_creds.json": true,
      "/home/u/.config/github-copilot/apps.json": true,
      "/etc/letsencrypt/live/example.com/privkey.pem": true,
      "/app/config/master.key": true,
      "/app/certs/client.p12": true,
      "/app/certs/client.pfx": true,
      "/app/android/release.jks": true,
      "/app/android/release.keystore": true,
      "/app/infra/prod.tfvars": true,
      "/app/infra/terraform.tfstate": true,
      "/app/infra/terraform.tfstate.backup": true,
      "/app/worker/.dev.vars": true,
      "/home/u/.s3cfg": true,
      "/home/u/.boto": true,
      "/srv/www/.htpasswd": true,
      "/home/u/.bash_history": true,
      "/home/u/.zsh_history": true,
      "/home/u/.psql_history": true,
      "/home/u/.mysql_history": true,
      "/home/u/.python_history": true,
      "/home/u/.node_repl_history": true,
      "/run/secrets/db_password": true,
      "/run/credentials/tacit.service/llm-key": true,
      "/run/user/1000/bus": false,
      "/srv/run/secrets/notes.txt": false,
      "/app/infra/main.tf": false,
      "/app/config/master.key.example": false,
      "/app/src/keys.ts": false,
      "/home/u/.bashrc": false,
      "/home/u/.claude/settings.json": false,
      "/home/u/.codex/config.toml": false,
      "/home/u/.config/other/settings.json": false,
      "/home/u/.cargo/config.toml": false,
      "/app/gh/hosts.yml": false,
      "/app/src/index.ts": false,
      "/app/.envrc": false,
      "/app/env": false,
    });
  });
});

describe("the defaults, in a home directory that is the allowed root", () => {
  // tacit started in the home directory makes it the default root (README). The coding agents'
  // own tokens lie there, and a script read them as plain text (a security review printed them).
  it("keep the coding agents' tokens classified: neither read nor grepped as text", async () => {
    const { runScript, freshTacitHome } = await import("../helpers.js");
    const { dir: home, cleanup } = realTempDir("tacit-home-defaults-");
    const tacitHome = freshTacitHome();
    try {
      const canary = `canary-${crypto.randomUUID()}`;
      const tokens = [".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json", ".config/github-copilot/apps.json"];
      for (const [at, file] of tokens.entries()) {
        mkdirSync(path.dirname(path.join(home, file)), { recursive: true });
        writeFileSync(path.join(home, file), `{"token": "${canary}-${at}"}\n`);
      }
      const script = `requestFileSystem(".", (fs) => {
  for (const file of ${JSON.stringify(tokens)}) {
    try { println(fs.access(file).read()); } catch (e) { println(file, "refused:", (e as Error).name); }
    println(fs.readClassified(file));
  }
  println(JSON.stringify(fs.grepRecursive(".", "canary")));
});`;
      const r = await runScript(script, [], { cwd: home, env: { HOME: home, TACIT_HOME: tacitHome.home } });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).not.toContain(canary);
      expect(r.stderr).not.toContain(canary);
      for (const file of tokens) expect(r.stdout).toContain(`${file} refused: SecurityError`);
      expect(r.stdout).toContain("[]");
    } finally {
      cleanup();
      tacitHome.cleanup();
    }
  });
});

describe("the defaults, in a project", () => {
  // Private keys, Terraform state and shell histories lay in the allowed roots unclassified: a
  // script read privkey.pem, terraform.tfstate (every secret a plan touched) and .bash_history as text.
  it("keep private keys, key stores, Terraform state and histories classified: neither read nor grepped as text", async () => {
    const { runScript, freshTacitHome } = await import("../helpers.js");
    const { dir, cleanup } = realTempDir("tacit-project-defaults-");
    const tacitHome = freshTacitHome();
    try {
      const canary = `canary-${crypto.randomUUID()}`;
      const files = ["certs/privkey.pem", "config/master.key", "infra/terraform.tfstate", "infra/prod.tfvars", ".bash_history", "worker/.dev.vars"];
      for (const [at, file] of files.entries()) {
        mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        writeFileSync(path.join(dir, file), `secret ${canary}-${at}\n`);
      }
      const script = `requestFileSystem(".", (fs) => {
  for (const file of ${JSON.stringify(files)}) {
    try { println(fs.access(file).read()); } catch (e) { println(file, "refused:", (e as Error).name); }
    println(fs.readClassified(file).map((text) => text.length));
  }
  println(JSON.stringify(fs.grepRecursive(".", "canary")));
});`;
      const sink = path.join(tacitHome.home, "sink.txt");
      const r = await runScript(script, ["--secure-output", sink], { cwd: dir, env: { TACIT_HOME: tacitHome.home } });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain(canary);
      for (const file of files) expect(r.stdout).toContain(`${file} refused: SecurityError`);
      expect(r.stdout).toContain("[]");
      // readClassified still reads each: its length reaches the secure output only.
      expect(readFileSync(sink, "utf8")).toContain(String(`secret ${canary}-0\n`.length));
    } finally {
      cleanup();
      tacitHome.cleanup();
    }
  });
});

describe("a pattern with \"(\", \")\" or \"|\"", () => {
  // gitignore takes them as the characters they are; picomatch read them as a regular
  // expression's group and alternation: "backup(1)*" classified "backup1-x" and left
  // "backup(1)-prod.txt" readable, "keys|old*" left "keys|old-2.txt" readable, and
  // "d(b)/*" left "d(b)/dump.sql" readable (a script printed each canary). Either reading classifies now.
  it("classifies the names it spells, characters as they are: neither read nor grepped as text", async () => {
    const { runScript, freshTacitHome } = await import("../helpers.js");
    const { dir, cleanup } = realTempDir("tacit-classified-groups-");
    const tacitHome = freshTacitHome();
    try {
      const canary = `canary-${crypto.randomUUID()}`;
      const files = ["backup(1)-prod.txt", "keys|old-2.txt", "d(b)/dump.sql", "x*(y)z.env"];
      for (const [at, file] of files.entries()) {
        mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        writeFileSync(path.join(dir, file), `secret ${canary}-${at}\n`);
      }
      const patterns = ["backup(1)*", "keys|old*", `${dir}/d(b)/*`, "x*(y)*.env"];
      const script = `requestFileSystem(".", (fs) => {
  for (const file of ${JSON.stringify(files)}) {
    try { println(fs.access(file).read()); } catch (e) { println(file, "refused:", (e as Error).name); }
  }
  println(JSON.stringify(fs.grepRecursive(".", "canary")));
});`;
      const r = await runScript(script, ["--quiet", "--classified-paths", patterns.join(",")], { cwd: dir, env: { TACIT_HOME: tacitHome.home } });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain(canary);
      for (const file of files) expect(r.stdout).toContain(`${file} refused: SecurityError`);
      expect(r.stdout).toContain("[]");
    } finally {
      cleanup();
      tacitHome.cleanup();
    }
  });

  it("still classifies what picomatch's reading of it matched", () => {
    expectMatches(["backup(1)*", "keys|old*"], { "/w/backup1-x": true, "/w/backup(1)-x": true, "/w/keys|old.txt": true, "/w/backup.txt": false });
  });
});

describe("patterns given to the CLI replace the defaults", () => {
  // An operator who adds a pattern of their own (--classified-paths secrets.json) easily takes
  // it as one more: it replaced every default, and a script read .env as plain text with no
  // word from tacit (a sixth review printed its canary). tacit names what is no longer classified.
  let dir: string;
  let cleanup: () => void;
  const canary = `canary-${crypto.randomUUID()}`;
  const READ_ENV = 'requestFileSystem(".", (fs) => println(fs.access(".env").read()));';
  beforeAll(() => {
    ({ dir, cleanup } = realTempDir("tacit-classified-replaced-"));
    writeFileSync(path.join(dir, ".env"), `TOKEN=${canary}\n`);
  });
  afterAll(() => cleanup());

  it("a warning names the default patterns the list leaves out", async () => {
    const { runScript } = await import("../helpers.js");
    const r = await runScript(READ_ENV, ["--classified-paths", "secrets.json"], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(canary); // What the operator's list says: .env is not classified.
    const warning = r.stderr.split("\n").find((line) => line.startsWith("tacit: warning: classifiedPaths replaces"));
    expect(warning, r.stderr).toBeDefined();
    for (const pattern of [".env", ".ssh", ".aws", "**/.config/gh"]) expect(warning).toContain(pattern);
    expect(warning).toMatch(/add them to the list to keep them classified/);
  });

  it("no warning when the list keeps the defaults", async () => {
    const { runScript } = await import("../helpers.js");
    const r = await runScript(READ_ENV, ["--classified-paths", [...DEFAULT_CLASSIFIED_PATHS, "secrets.json"].join(",")], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain(canary);
    expect(r.stderr).not.toMatch(/classifiedPaths replaces/);
  });
});

describe("a name holding a line break", () => {
  // picomatch makes `**` a `.` in its expression, which matches no line break without the s
  // flag: a review found an approval rule on deploy/** missing deploy/run\n.sh (policy.ts), and
  // classified patterns were compiled the same way.
  it("is matched by ** as any other name", () => {
    expectMatches(["/data/**/*.key", "**/.config/gh"], {
      "/data/a\nb/c.key": true,
      "/data/a\rb/c.key": true,
      "/data/a\u2028b/c.key": true,
      "/home/u\nv/.config/gh/hosts.yml": true,
      "/home/u\nv/.config/other": false,
    });
  });

  it("a file a classified pattern's ** covers only through it is refused to read() and skipped by grepRecursive, through the CLI", async () => {
    const { runScript } = await import("../helpers.js");
    const { dir, cleanup } = realTempDir("tacit-classified-line-break-");
    try {
      const canary = `canary-${crypto.randomUUID()}`;
      mkdirSync(path.join(dir, "secrets", "sub\ndir"), { recursive: true });
      writeFileSync(path.join(dir, "secrets", "sub\ndir", "token\n.txt"), `TOKEN=${canary}\n`);
      writeFileSync(path.join(dir, "notes.txt"), "TOKEN=ordinary\n");
      const script =
        'requestFileSystem(".", (fs) => {\n' +
        '  try { println(fs.access("secrets/sub\\ndir/token\\n.txt").read()); } catch (e) { println("read refused:", String(e).includes("classified")); }\n' +
        '  println(JSON.stringify(fs.grepRecursive(".", "TOKEN=", "**")));\n' +
        "});\n";
      const r = await runScript(script, ["--classified-paths", `${dir}/secrets/**/*.txt`], { cwd: dir });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain("read refused: true");
      expect(r.stdout).toContain("TOKEN=ordinary");
      expect(r.stdout + r.stderr).not.toContain(canary);
    } finally {
      cleanup();
    }
  });
});

describe("the quick look that rules most names and paths out before the joined expression", () => {
  // Every read and every walked entry is tried on the classified patterns; for patterns of plain
  // characters and "*" a text's first and last characters rule most of them out before the joined
  // expression runs (quickRefusal in classified-paths.ts). It may only ever say no where
  // picomatch's own test of each pattern says no: a yes it missed would leave a secret readable.
  const options = { dot: true, flags: "s" } as const;
  const fills = { star: ["", "x", ".", "..", "a.b", "/", "é", "\n"], globstar: ["", "d", "d/e", ".h/x", "/"] };

  /** Texts a pattern's match might be spelled as, and near misses of each. */
  function textsFor(pattern: string): string[] {
    let spelled = [pattern];
    for (const [glob, choices] of [["**", fills.globstar], ["*", fills.star]] as const) {
      spelled = spelled.flatMap((text) => {
        const at = text.indexOf(glob);
        return at === -1 ? [text] : choices.map((fill) => text.slice(0, at) + fill + text.slice(at + glob.length)).flatMap((t) => (t.includes(glob) ? textsFor(t) : [t]));
      });
    }
    return spelled.flatMap((text) => [text, `${text}/`, `.${text}`, `${text}x`, text.slice(1), text.slice(0, -1), `a/${text}`, `${text}/b`]);
  }

  const unrelated = ["", ".", "..", "/", "f1.txt", "index.ts", "package.json", ".gitignore", "x.pem/", "a\nb.pem", "é.pem", "tmp/h/f1.txt", "a//b", ".config/gcloud", "home/u/.config/gcloud/hosts"];

  function expectAsPicomatch(patterns: string[], matched: (classified: ClassifiedPaths, text: string) => boolean): void {
    const classified = new ClassifiedPaths(patterns);
    const tests = patterns.map((pattern) => picomatch(pattern, options));
    const texts = [...new Set([...unrelated, ...patterns.flatMap(textsFor)])];
    // picomatch's answer for each text, found once (the oracle is most of this test's time).
    const expected = texts.map((text) => tests.some((test) => test(text)));
    const differing = texts.filter((text, i) => matched(classified, text) !== expected[i]);
    expect(differing, `patterns ${JSON.stringify(patterns)}`).toEqual([]);
    // The texts hold matches: the comparison is not of "no" with "no" alone.
    expect(expected.filter(Boolean).length).toBeGreaterThan(patterns.length);
  }

  it("answers names as picomatch does, for the default name patterns and other plain ones", () => {
    const patterns = [...DEFAULT_CLASSIFIED_PATHS.filter((p) => !p.includes("/")), "a*b*c", "x*", "*y", "secret", "key-*.json", "*.tar.gz", "ab*ba"];
    expectAsPicomatch(patterns, (classified, name) => classified.matchesExactly(`/dir/${name}`, name));
  });

  it("answers paths below the root as picomatch does, for the default anchored patterns and other plain ones", () => {
    const patterns = [...DEFAULT_CLASSIFIED_PATHS.filter((p) => p.includes("/") && !p.startsWith("/")), "srv/**/keys", "a/**", "**/b", "tmp/*/secret", "a/**/a", "x/*.pem", "**/deep/**/k*y", "c/*"];
    expectAsPicomatch(patterns, (classified, text) => classified.matchesExactly(`/${text}`, "-"));
  });

  // A pattern matches as written, and in any case: on a case-insensitive file system `.ENV` is
  // `.env`, `x.\u212Aey` (Kelvin sign) is `x.key`, `.\u017Fsh` (long s) is `.ssh`.
  const foldedOptions = { dot: true, flags: "is" } as const;
  /** The texts of textsFor, and each in other cases and with letters a file system folds to ASCII ones. */
  const casesOf = (text: string): string[] => [
    text,
    text.toUpperCase(),
    text.charAt(0).toUpperCase() + text.slice(1),
    text.slice(0, -1) + text.slice(-1).toUpperCase(),
    text.replaceAll("k", "\u212a").replaceAll("s", "\u017f").replaceAll("fi", "\ufb01"),
  ];

  /** Each of `matchers` (by name) answers every text as picomatch does, as written or folded; picomatch is asked once per text for them all (it is most of the time). */
  function expectInAnyCaseAsPicomatch(patterns: string[], matchers: Record<string, (classified: ClassifiedPaths, text: string) => boolean>): void {
    const classified = new ClassifiedPaths(patterns);
    const asWritten = patterns.map((pattern) => picomatch(pattern, options));
    const inAnyCase = patterns.map((pattern) => picomatch(pattern, foldedOptions));
    const texts = [...new Set([...unrelated, ...patterns.flatMap(textsFor)].flatMap(casesOf))];
    const written = texts.map((text) => asWritten.some((test) => test(text)));
    const expected = texts.map((text, i) => written[i]! || inAnyCase.some((test) => test(caseFolded(text))));
    for (const [what, matched] of Object.entries(matchers)) {
      const differing = texts.filter((text, i) => matched(classified, text) !== expected[i]);
      expect(differing, `${what}, patterns ${JSON.stringify(patterns)}`).toEqual([]);
    }
    // Texts in other cases are among the matches: the comparison is not of the lower case alone.
    expect(texts.filter((_, i) => expected[i] && !written[i]).length).toBeGreaterThan(patterns.length);
  }

  it("answers names in any case as picomatch does, as written or in lower case", () => {
    const patterns = [...DEFAULT_CLASSIFIED_PATHS.filter((p) => !p.includes("/")), "a*b*c", "X*", "*Y", "Secret", "key-*.JSON", "*.tar.gz", "ab*ba"];
    expectInAnyCaseAsPicomatch(patterns, {
      matchesExactly: (classified, name) => classified.matchesExactly(`/dir/${name}`, name),
      entriesOf: (classified, name) => classified.entriesOf("/dir")(name),
    });
  });

  it("answers paths below the root in any case as picomatch does, as written or in lower case", () => {
    const patterns = [...DEFAULT_CLASSIFIED_PATHS.filter((p) => p.includes("/") && !p.startsWith("/")), "srv/**/Keys", "a/**", "**/b", "tmp/*/secret", "x/*.PEM", "**/deep/**/k*y", "c/*"];
    expectInAnyCaseAsPicomatch(patterns, { matchesExactly: (classified, text) => classified.matchesExactly(`/${text}`, "-") });
  });
});

describe("plain patterns whose matches the quick look must let through, through the CLI", () => {
  // The quick look (quickRefusal) rules a text out by its first and last characters: a match that
  // starts or ends where the pattern's "*" or "**" stands (a file named ".pem" for "*.pem", "tokens"
  // for "**/tokens", "srv/keys" for "srv/**/keys") must still be refused, after many ordinary files
  // read first, whatever way it is read. Anchored patterns name the temp directory below "/".
  it("refuses each to read, readBytes, grep and grepRecursive, after ordinary reads; the canary shows nowhere", async () => {
    const { runScript } = await import("../helpers.js");
    const { dir, cleanup } = realTempDir("tacit-quick-look-");
    try {
      const canary = `canary-${crypto.randomUUID()}`;
      const below = `${dir.slice(1)}/root`;
      const patterns = ["*.pem", "key-*.json", "x*y", `${below}/vault/**`, "**/tokens", `${below}/srv/**/keys`];
      const secrets = [".pem", "a/b.pem", "key-.json", "key-1.json", "xy", "x.y", "vault/v.txt", "vault/inner/v.txt", "tokens", "deep/er/tokens", "srv/keys", "srv/a/b/keys"];
      for (const [at, file] of secrets.entries()) {
        mkdirSync(path.dirname(path.join(dir, "root", file)), { recursive: true });
        writeFileSync(path.join(dir, "root", file), `secret ${canary}-${at}\n`);
      }
      let ordinary = 0;
      for (let i = 0; i < 200; i++) {
        writeFileSync(path.join(dir, "root", `f${i}.txt`), `ordinary ${i}\n`);
        ordinary += `ordinary ${i}\n`.length;
      }
      const script = `requestFileSystem(${JSON.stringify(path.join(dir, "root"))}, (fs) => {
  let ordinary = 0;
  for (let i = 0; i < 200; i++) ordinary += fs.access("f" + i + ".txt").read().length;
  println("ordinary", ordinary);
  for (const file of ${JSON.stringify(secrets)}) {
    for (const [how, read] of [["read", () => fs.access(file).read()], ["readBytes", () => String(fs.access(file).readBytes())], ["grep", () => JSON.stringify(fs.grep(file, "secret"))]] as const) {
      try { println(file, how, read()); } catch (e) { println(file, how, "refused:", (e as Error).name); }
    }
  }
  println("search", JSON.stringify(fs.grepRecursive(".", "secret")));
});`;
      const r = await runScript(script, ["--classified-paths", patterns.join(",")], { cwd: dir });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain(canary);
      expect(r.stdout).toContain(`ordinary ${ordinary}`);
      for (const file of secrets) for (const how of ["read", "readBytes", "grep"]) expect(r.stdout).toContain(`${file} ${how} refused: SecurityError`);
      expect(r.stdout).toContain("search []");
    } finally {
      cleanup();
    }
  });
});

describe("path patterns in a recursive search", () => {
  // A path pattern is tried only on paths ending in its last component when that is plain text
  // (classified-paths.ts): grepRecursive must still prune every path such a pattern classifies,
  // a file or a directory, and search the same names where no pattern classifies them.
  it("prunes what they classify, whether their last component is plain text or a glob, through the CLI", async () => {
    const { runScript, tempDirWithHome } = await import("../helpers.js");
    const { writeTree } = await import("./fixtures.js");
    const { dir, env, cleanup } = tempDirWithHome("tacit-classified-path-search-");
    try {
      const canary = `canary-${crypto.randomUUID()}`;
      writeTree(dir, {
        "vault/token.txt": `TOKEN ${canary}-file\n`,
        "other/token.txt": "TOKEN ordinary-file\n",
        "keys/a.txt": `TOKEN ${canary}-glob\n`,
        "keys/a.md": "TOKEN ordinary-glob\n",
        "home/.config/gh/hosts.yml": `TOKEN ${canary}-directory\n`,
        "home/.config/ghx/hosts.yml": "TOKEN ordinary-directory\n",
      });
      const patterns = ["**/vault/token.txt", `${dir}/keys/*.txt`, "**/.config/gh"];
      const script = `requestFileSystem(".", (fs) => {
  for (const m of fs.grepRecursive(".", "TOKEN")) println(m.file.slice(${dir.length + 1}), m.line);
  for (const file of ["vault/token.txt", "keys/a.txt", "home/.config/gh/hosts.yml"]) {
    try { println(fs.access(file).read()); } catch (e) { println(file, "refused:", (e as Error).name); }
  }
});`;
      const r = await runScript(script, ["--quiet", "--classified-paths", patterns.join(",")], { cwd: dir, env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain(canary);
      expect(r.stdout.split("\n").filter((line) => line.includes("ordinary")).sort()).toEqual([
        "home/.config/ghx/hosts.yml TOKEN ordinary-directory",
        "keys/a.md TOKEN ordinary-glob",
        "other/token.txt TOKEN ordinary-file",
      ]);
      for (const file of ["vault/token.txt", "keys/a.txt", "home/.config/gh/hosts.yml"]) expect(r.stdout).toContain(`${file} refused: SecurityError`);
    } finally {
      cleanup();
    }
  });
});
