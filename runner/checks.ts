// The checks before anything runs: the validator, then (unless switched off) the type
// checker. Kept apart from the rest of the runner so the CLI can start them early.

import type { ParseRefusal } from "./nesting.js";
import type { ParsedProgram } from "./parser.js";
import type { PureFunctionSite } from "./pure-functions.js";
import type { SnippetCheck } from "./split-check.js";
import { DEFAULT_TIMEOUT_MS } from "./limits.js";
import { formatTypeDiagnostic, typeCheck, type TypeCheckResult } from "./typecheck.js";
import { formatDiagnostic, namesOnlyTacit, type TacitImport, validate } from "./validator.js";

/**
 * The most problems a check lists: each names its rule and gives a hint, some 300 characters for
 * as little as two of code (`a` on a line), and nothing bounded how many: a 360 KB script of
 * `Deno;` lines came back as a 20.5 MB error, past the 10 MiB a script's own output is cut at and
 * with no mark of it, twice over in tacit serve's tool result (its text and structured content),
 * and whole in the --record file. The first ones are what an agent fixes first anyway.
 */
export const LISTED_PROBLEMS_LIMIT = 100;

/** `errors`, at most LISTED_PROBLEMS_LIMIT of them, and then a line that says how many more there are. */
function listed(errors: string[]): string[] {
  if (errors.length <= LISTED_PROBLEMS_LIMIT) return errors;
  const more = errors.length - LISTED_PROBLEMS_LIMIT;
  return [
    ...errors.slice(0, LISTED_PROBLEMS_LIMIT),
    `… and ${more} more ${more === 1 ? "problem" : "problems"}, not listed (only the first ${LISTED_PROBLEMS_LIMIT} are): fix these and check again`,
  ];
}

export interface CheckResult {
  ok: boolean;
  /** One formatted message per problem, `script.ts:LINE:COL error …`. */
  errors: string[];
  tacitImports: TacitImport[];
  pureFunctions: PureFunctionSite[];
}

/**
 * How the code is type-checked: a tsc process by default; a long-lived server passes its own,
 * which can also check a session's new snippet apart from the earlier ones (split-check.ts).
 */
export type TypeChecker = (code: string, snippet?: SnippetCheck) => TypeCheckResult | Promise<TypeCheckResult>;

/**
 * The cancellation of the check being asked for at this moment, set by checksCancelledBy around
 * its synchronous call of the checker it wraps, and read by a checker that can stop a check
 * (typecheck-thread.ts ThreadedTypeChecker) as it is called: JavaScript runs one call at a time,
 * so no other check can be asked meanwhile. A TypeChecker takes no signal, and a server's own
 * closes over its checker, so the signal goes with the call instead.
 */
let askedUnder: AbortSignal | undefined;

/** The cancellation of the check being asked for now (see checksCancelledBy), if any. */
export function cancellationOfCheckAsked(): AbortSignal | undefined {
  return askedUnder;
}

/**
 * `checker`, with each check it is asked for stopped when `signal` is aborted, where the checker
 * can stop one: a queued check is never sent, and a running one has its checker process killed.
 * Applied by evaluate() to a checker it is given, for every caller (a session's snippet, a
 * one-shot call): a check left running kept a core busy up to the time limit for a snippet that
 * was gone, and every later check waited behind it.
 */
export function checksCancelledBy(checker: TypeChecker, signal: AbortSignal | undefined): TypeChecker {
  if (signal === undefined) return checker;
  return (code, snippet) => {
    const outer = askedUnder;
    askedUnder = signal;
    try {
      return checker(code, snippet);
    } finally {
      askedUnder = outer;
    }
  };
}

/** A session's part in its type check: how to check the new snippet, and what the checker said of its names. */
export interface SessionTypeCheck {
  /**
   * Asked once the snippet has passed validation, or before the validator runs for a snippet that
   * names no other module (see checkInStages); null: check the whole program, no names asked about.
   */
  plan(): SnippetCheck | null | Promise<SnippetCheck | null>;
  /** Told after the check: whether one of the snippet's names is a global already (null: not asked). */
  checked(shadowsGlobal: Promise<boolean> | null): void;
}

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
  const { validation, types } = checkInStages(code, displayName, typeCheckEnabled, checker, fresh);
  return types ?? validation;
}

/**
 * The checks in two stages: the validation's result now, and the type check as a promise, or
 * null when validation failed or type-checking is off. A caller can prepare the run while types
 * are checked. The type checker reads the modules code names, so it gets only code that passed
 * validation, or a session's snippet that names no module but "tacit" (namesOnlyTacit), whose
 * nesting was measured (`probed` null) and whose earlier snippets passed: such a snippet's check
 * starts before the validator runs, and overlaps it (the validator reads the whole session, its
 * time grows with it). Either way the check's verdict counts only once validation has passed; a
 * check started for a snippet the validator then refuses is stopped by the caller (see evaluate),
 * through the checker's cancellation (checksCancelledBy).
 * `probed`: nesting.ts's parseRefusalAsync verdict on `fresh`, where the caller awaited it.
 */
export function checkInStages(
  code: string,
  displayName: string,
  typeCheckEnabled: boolean,
  checker: TypeChecker,
  fresh: string = code,
  parsed?: () => ParsedProgram | null,
  session?: SessionTypeCheck,
  probed?: ParseRefusal | null,
): { validation: CheckResult; types: Promise<CheckResult> | null } {
  // Started before the caller goes on: the caller prepares the run while the checker works (a
  // session's check started only once that preparation had yielded, about 0.7 ms later).
  const startTypes = (): Promise<TypeCheckResult> => {
    const checkWith = async (snippet: SnippetCheck | null): Promise<TypeCheckResult> => {
      const checked = await (snippet ? checker(code, snippet) : checker(code));
      session?.checked(snippet ? (checked.shadowsGlobal ?? Promise.resolve(true)) : null);
      return checked;
    };
    try {
      const plan = session ? session.plan() : null;
      return plan instanceof Promise ? plan.then(checkWith) : checkWith(plan);
    } catch (error) {
      return Promise.reject(error);
    }
  };
  const program = typeCheckEnabled && session && probed === null ? (parsed?.() ?? null) : null;
  const early = program !== null && namesOnlyTacit(program, code.length - fresh.length) ? startTypes() : null;
  // Not awaited if validation fails (or throws).
  early?.catch(() => undefined);
  const validation = validate(code, displayName, fresh, parsed, probed);
  if (!validation.ok) {
    const errors = listed(validation.diagnostics.map((d) => formatDiagnostic(displayName, d)));
    return { validation: { ok: false, errors, tacitImports: [], pureFunctions: [] }, types: null };
  }
  const { tacitImports, pureFunctions } = validation;
  const passed: CheckResult = { ok: true, errors: [], tacitImports, pureFunctions };
  if (!typeCheckEnabled) return { validation: passed, types: null };
  const started = early ?? startTypes();
  const types = started
    .then((checked): CheckResult => (checked.ok ? passed : { ok: false, errors: listed(checked.diagnostics.map((d) => formatTypeDiagnostic(displayName, d))), tacitImports, pureFunctions }));
  return { validation: passed, types };
}

