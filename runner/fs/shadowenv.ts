// A trusted shadowenv directory's programs. shadowenv runs the `*.lisp` files of a `.shadowenv.d`
// at every cd into (or prompt in) its directory once the user ran `shadowenv trust` there, and its
// trust is by path: the trust file it writes (`.shadowenv.d/trust-<fingerprint>`) is a signature
// of the directory's path, not of the programs (its documentation: trusting a directory allows
// any code within it to run). A program can set any variable of the user's shell (PROMPT_COMMAND,
// which bash runs at the next prompt; PATH). So a script may not change (nor create, nor delete)
// a file in a `.shadowenv.d` that holds a trust file; reading stays allowed, and an untrusted
// `.shadowenv.d` stays writable (shadowenv refuses to run it until trusted). Costs a test of the
// path's name per write, and a listing of the `.shadowenv.d` only for a path inside one. Not
// covered: which key the trust file is signed with (any trust file counts), and shadowenv is not
// installable here: this follows its documentation (https://shopify.github.io/shadowenv/trust).

import { readdirSync } from "node:fs";
import path from "node:path";
import { OperationMemo } from "./operation-memo.js";
import type { ProtectedPath } from "./protected-paths.js";

/** A path inside a `.shadowenv.d` (any depth), and that directory. In any case, as on a case-insensitive file system. */
const IN_SHADOWENV = /^(.*\/\.shadowenv\.d)\/./i;

/** Whether each `.shadowenv.d` holds a trust file, remembered for the operation. */
const trustedAt = new OperationMemo<boolean>();

function isTrusted(dir: string): boolean {
  return trustedAt.get(dir, () => {
    try {
      return readdirSync(dir).some((entry) => /^trust-/i.test(entry));
    } catch {
      return false;
    }
  });
}

/** The trusted `.shadowenv.d` `changed` (a path a script would change) lies in, as a protected path, or null. */
export function shadowenvChangeOf(changed: string): ProtectedPath | null {
  const dir = IN_SHADOWENV.exec(changed.split(path.sep).join("/"))?.[1];
  if (dir === undefined || !isTrusted(dir)) return null;
  return {
    path: changed,
    what: `a file in ${dir}, a shadowenv directory the user trusts`,
    readable: true,
    refusal:
      "scripts may read it but not change it (nor create or delete it): shadowenv trusts the directory by its path, not the programs in " +
      "it, so it runs them at the user's next cd or prompt there without asking again, setting any variable of the user's shell " +
      "(PROMPT_COMMAND, PATH, …) outside the sandbox. Ask the user to change it",
  };
}

