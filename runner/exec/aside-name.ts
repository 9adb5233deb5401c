// Where tacit sets aside what a confined command left that it cannot judge or keep: beside it,
// under a name that nothing reads (npx reads package.json, git looks for .git).

import { lstatSync } from "node:fs";

/** A name beside `file` that nothing has yet: `<file>.tacit-unjudged`, then .1, .2, … */
export function asideName(file: string): string {
  const base = `${file}.tacit-unjudged`;
  for (let n = 0; ; n++) {
    const name = n === 0 ? base : `${base}.${n}`;
    if (lstatSync(name, { throwIfNoEntry: false }) === undefined) return name;
  }
}
