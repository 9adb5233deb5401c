// The checks before anything runs: the validator, then (unless switched off) the type
// checker. Kept apart from the rest of the runner so the CLI can start them early.

import type { PureFunctionSite } from "./pure-functions.js";
import { DEFAULT_TIMEOUT_MS } from "./limits.js";
import { formatTypeDiagnostic, typeCheck, type TypeCheckResult } from "./typecheck.js";
import { formatDiagnostic, type TacitImport, validate } from "./validator.js";

export interface CheckResult {
  ok: boolean;
  /** One formatted message per problem, `script.ts:LINE:COL error …`. */
  errors: string[];
  tacitImports: TacitImport[];
  pureFunctions: PureFunctionSite[];
}

/** How the code is type-checked: a tsc process by default; a long-lived server passes its own. */
export type TypeChecker = (code: string) => TypeCheckResult | Promise<TypeCheckResult>;

/**
 * `fresh`: the part of `code` not checked before (a session's new snippet; the earlier ones
 * passed already): only its nesting is measured, so a long session is not probed again and again.
 */
export async function checkScript(
  code: string,
  displayName: string,
  typeCheckEnabled: boolean,
  checker: TypeChecker = (text) => typeCheck(text, DEFAULT_TIMEOUT_MS),
  fresh: string = code,
): Promise<CheckResult> {
  const validation = validate(code, displayName, fresh);
  if (!validation.ok) {
    return { ok: false, errors: validation.diagnostics.map((d) => formatDiagnostic(displayName, d)), tacitImports: [], pureFunctions: [] };
  }
  if (typeCheckEnabled) {
    const types = await checker(code);
    if (!types.ok) {
      return {
        ok: false,
        errors: types.diagnostics.map((d) => formatTypeDiagnostic(displayName, d)),
        tacitImports: validation.tacitImports,
        pureFunctions: validation.pureFunctions,
      };
    }
  }
  return { ok: true, errors: [], tacitImports: validation.tacitImports, pureFunctions: validation.pureFunctions };
}

