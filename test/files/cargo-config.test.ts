// Cargo's configuration (runner/fs/cargo-config.ts): `build.rustc` and `build.rustc-wrapper` in a
// .cargo/config.toml name the programs cargo runs at every command that reads the project, `cargo
// metadata` (what an editor's rust-analyzer runs on opening it) included. Through the real CLI, a
// script with requestFileSystem(".") alone may not write them (plain, as a dotted or escaped key, in
// pieces, in the older .cargo/config, in a subfolder's, classified); other keys, and reads, go
// through. Then the user runs the real `cargo metadata` (where installed) in the project and its
// subfolder: no canary file.

import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, realTempDir, tacit, writeTree } from "./fixtures.js";

const HAS_CARGO = spawnSync("cargo", ["--version"], { stdio: "ignore" }).status === 0;

/** The user asks cargo about the project in `dir`, as rust-analyzer does when an editor opens it. */
function cargoMetadata(dir: string): void {
  if (!HAS_CARGO) return;
  spawnSync("cargo", ["metadata", "--format-version", "1", "--offline"], { cwd: dir, stdio: "ignore", timeout: 60_000 });
}

describe("cargo's configuration", () => {
  it("may not come to name the compiler cargo runs, its wrapper or a credential provider; other keys may be written", async () => {
    const { dir, cleanup } = realTempDir("tacit-cargo-config-");
    try {
      const marker = path.join(dir, "PWNED");
      const manifest = (name: string): string => `[package]\nname = "${name}"\nversion = "0.1.0"\nedition = "2021"\n`;
      const plain = "[build]\njobs = 2\n";
      writeTree(dir, {
        "Cargo.toml": manifest("project"),
        "src/main.rs": "fn main() {}\n",
        ".cargo/config.toml": plain,
        "sub/Cargo.toml": manifest("sub"),
        "sub/src/main.rs": "fn main() {}\n",
        "secret/.cargo/config.toml": plain,
      });
      const wrapper = '[build]\nrustc-wrapper = "/bin/sh"\nrustc = "evil.sh"\n';
      const cut = wrapper.indexOf("rustc-wrapper") + 3;
      const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("payload", () => fs.access("evil.sh").write(${lit(`touch ${marker}\n`)}));
  attempt("sub payload", () => fs.access("sub/evil.sh").write(${lit(`touch ${marker}\n`)}));
  attempt("read", () => fs.access(".cargo/config.toml").read());
  attempt("wrapper", () => fs.access(".cargo/config.toml").write(${lit(wrapper)}));
  attempt("dotted", () => fs.access(".cargo/config.toml").write(${lit('build.rustc-wrapper = "/bin/sh"\nbuild.rustc = "evil.sh"\n')}));
  attempt("escaped", () => fs.access(".cargo/config.toml").write(${lit('[build]\n"rust\\u0063-wrapper" = "/bin/sh"\n"rust\\u0063" = "evil.sh"\n')}));
  attempt("in pieces", () => {
    fs.access(".cargo/config.toml").write(${lit(wrapper.slice(0, cut))});
    fs.access(".cargo/config.toml").append(${lit(wrapper.slice(cut))});
  });
  attempt("the older name", () => fs.access(".cargo/config").write(${lit(wrapper)}));
  attempt("credential provider", () => fs.access(".cargo/config.toml").write(${lit('[registry]\nglobal-credential-providers = ["/bin/sh evil.sh"]\n')}));
  attempt("a subfolder's", () => { fs.access("sub/.cargo").mkdir(); fs.access("sub/.cargo/config.toml").write(${lit(wrapper)}); });
  attempt("classified", () => fs.access("secret/.cargo/config.toml").writeClassified(classify(${lit(wrapper)})));
  attempt("other keys", () => fs.access(".cargo/config.toml").write(${lit('[build]\njobs = 4\nrustflags = ["-C", "opt-level=1"]\n\n[env]\nAPP_MODE = "dev"\n')}));
});
`;
      const r = await tacit(dir, script, ["--quiet", "--classified-paths", "**/secret/.cargo/config.toml"]);
      expect(r.code, r.stderr).toBe(0);
      const found = attempts(r.stdout);
      expectRefused(
        found,
        ["wrapper", "dotted", "escaped", "in pieces", "the older name", "credential provider", "a subfolder's"],
        /refused: it would leave a cargo configuration naming "(rustc|credential)".*`cargo metadata`.*Leave those keys out.*ask the user/,
      );
      expectRefused(found, ["classified"], /writeClassified\(\) refused: this is a cargo configuration/);
      expect(attemptOf(found, "payload").status).toBe("ok");
      expect(attemptOf(found, "read")).toEqual({ status: "ok", value: plain });
      expect(attemptOf(found, "other keys").status).toBe("ok");
      expect(readFileSync(path.join(dir, ".cargo/config.toml"), "utf8")).toMatch(/^\[build\]\njobs = 4\n/);
      expect(existsSync(path.join(dir, ".cargo/config"))).toBe(false);
      // The user opens the project and its subfolder in an editor (rust-analyzer asks cargo about them).
      cargoMetadata(dir);
      cargoMetadata(path.join(dir, "sub"));
      expect(existsSync(marker)).toBe(false);
    } finally {
      cleanup();
    }
  }, 120_000);
});
