// How a refusal says where a path that changed (a link swapped in while a person was asked, or
// after the policy's rules were applied) now leads. A place inside the bounds the script works in
// (its file-system scope, or the allowed roots) is named, as the script names it; any other place
// is not: "it now leads to /tmp/…/outside-<name>/prod.conf" told a script where a link it had
// moved into place led outside the scope, which no other answer names.

import path from "node:path";
import { printable } from "../printable.js";
import { isWithin } from "./containment.js";

/** Where a script may act, for naming a place: real directories, each with the name the script knows it by. */
export interface PlaceBounds {
  /** What the bounds are, in a refusal's words: "this file system scope", "the allowed roots". */
  what: string;
  roots: ReadonlyArray<{ real: string; named: string }>;
}

/** A file-system scope's bounds: its real root, named by the root as the script named it. */
export function scopeBounds(scope: { root: string; realRoot: string }): PlaceBounds {
  return { what: "this file system scope", roots: [{ real: scope.realRoot, named: scope.root }] };
}

/** The allowed roots' bounds (real paths, which the script is told in refusals already). */
export function allowedRootsBounds(roots: readonly string[]): PlaceBounds {
  return { what: "the allowed roots", roots: roots.map((root) => ({ real: root, named: root })) };
}

/**
 * "it now leads elsewhere inside <bounds>, to <place>" for `real` inside them (the place under the
 * root as the script names it), else "it now leads outside <bounds>", naming nothing.
 */
export function nowLeadsText(real: string, bounds: PlaceBounds): string {
  const root = bounds.roots.find((each) => isWithin(real, each.real));
  if (root === undefined) return `it now leads outside ${bounds.what}`;
  const shown = root.named === root.real ? real : path.join(root.named, path.relative(root.real, real));
  return `it now leads elsewhere inside ${bounds.what}, to ${printable(shown)}`;
}
