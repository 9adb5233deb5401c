// Cargo's configuration in a project (`.cargo/config.toml`, or the older `.cargo/config`, in any
// directory: cargo reads the one of the directory it runs in and of every directory above it).
// Its `build.rustc`, `build.rustc-wrapper` and `build.rustc-workspace-wrapper` name the compiler
// cargo runs, and the program it runs the compiler through, for every command that reads the
// project: `cargo metadata` (which rust-analyzer runs as soon as an editor opens the project),
// `cargo tree`, `cargo fetch`, `cargo fmt`, …, none of which otherwise runs the project's code
// (build.rs runs at `cargo build`: code the user builds, as the rest of the project). A file a
// script writes is never executable, but a wrapper that is an interpreter runs it: shown through
// the real CLI and cargo 1.95, a script wrote `[build] rustc-wrapper = "/bin/sh"` and
// `rustc = "evil.sh"` into .cargo/config.toml and evil.sh beside it, and the user's next
// `cargo metadata` there ran `/bin/sh evil.sh -vV`, with the user's authority, outside the
// sandbox. And its credential providers (`credential-provider`, `global-credential-providers`,
// `credential-alias`), which `cargo login`, `cargo owner`, `cargo yank` and fetches from a
// registry that needs a token run.
// So a write may not leave such a file naming the compiler, a credential provider or an included
// file (`include`, which a later cargo may read without a flag), judged by the word alone, TOML
// escapes decoded, in any case, as automatic-tasks.ts judges a task file. Its other keys (build
// jobs, rustflags, target, aliases, registries, `[env]`) go through: they change what `cargo build`
// builds, which runs the project's code anyway. Not covered: rust-analyzer's own configuration
// (rust-analyzer.toml), and `$CARGO_HOME/config.toml` outside the home directory.

import path from "node:path";
import { LAUNCH_MANIFEST_LIMIT_BYTES, TOO_LONG } from "../launch-files.js";

/** Whether one of `files` (a path as named and where it leads) is a cargo configuration. */
export function isCargoConfigAt(files: readonly string[]): boolean {
  return files.some((file) => {
    // In lower case: on a case-insensitive file system `.Cargo/Config.toml` is cargo's file.
    const name = path.basename(file).toLowerCase();
    return (name === "config.toml" || name === "config") && path.basename(path.dirname(file)).toLowerCase() === ".cargo";
  });
}

/** `text` with TOML's `\uXXXX` and `\UXXXXXXXX` escapes decoded, as cargo reads quoted keys and strings. */
function decodedEscapes(text: string): string {
  return text.replace(/\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})/g, (whole, short: string | undefined, long: string | undefined) => {
    const code = Number.parseInt(short ?? long ?? "", 16);
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

/** The words whose keys make cargo run a program named in the file: the compiler and its wrappers, credential providers, an included file. */
const PROGRAM_WORDS = /rustc|credential|include/i;

/**
 * Why a write leaving `after` in a cargo configuration (see isCargoConfigAt) is refused, or null.
 * One past LAUNCH_MANIFEST_LIMIT_BYTES is refused: it is read whole to judge it.
 */
export function cargoProgramChange(after: string | typeof TOO_LONG): string | null {
  if (after === TOO_LONG || Buffer.byteLength(after) > LAUNCH_MANIFEST_LIMIT_BYTES) {
    return `it would leave this cargo configuration larger than ${LAUNCH_MANIFEST_LIMIT_BYTES} bytes, and tacit reads all of it to check that it names no program cargo runs`;
  }
  const word = PROGRAM_WORDS.exec(decodedEscapes(after));
  if (word === null) return null;
  return (
    `it would leave a cargo configuration naming ${JSON.stringify(word[0])} (build.rustc, build.rustc-wrapper, a credential provider or an ` +
    "included file): cargo runs that program, with the user's full authority and outside the sandbox, at every command that reads the " +
    "project (`cargo metadata`, which editors run as soon as they open it, `cargo tree`, `cargo fmt`, …), where otherwise only `cargo build` " +
    "runs the project's code. Leave those keys out (other keys, rustflags and [env] included, may be written), or ask the user to set them " +
    "(a configuration that holds one already changes only by the user, or by a write that removes it)"
  );
}
