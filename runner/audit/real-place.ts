// Where a file named by a path is, or would be made: loaded by what checks an audit log's place
// at every start (secure-output-clash.ts) without the audit modules (anchor.ts keys its records by it).

import { realpathSync } from "node:fs";
import path from "node:path";

/** A file's real path, or, for one that does not exist (to be created, or deleted), its directory's real path and its name. */
export function realPlace(file: string): string {
  const resolved = path.resolve(file);
  try {
    return realpathSync(resolved);
  } catch {
    try {
      return path.join(realpathSync(path.dirname(resolved)), path.basename(resolved));
    } catch {
      return resolved;
    }
  }
}
