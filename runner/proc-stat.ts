// /proc/<pid>/stat, read by field. Its second field, the command name in parentheses, may hold
// spaces and parentheses of its own (a process can name itself anything), so the fields are
// counted from the last ")", never by splitting the whole line.

import { readFileSync } from "node:fs";

/** Field `n` of a stat line as a number, numbered as proc(5) numbers them (3: state, 4: ppid, 14: utime …); NaN where it is not a number or absent. */
export type StatField = (n: number) => number;

/** The numeric fields of the stat file `file` (/proc/PID/stat, /proc/self/stat), from field 3 on; null where it cannot be read. */
export function readStatFields(file: string): StatField | null {
  let stat: string;
  try {
    stat = readFileSync(file, "utf8");
  } catch {
    return null;
  }
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (n) => (n >= 3 && n - 3 < fields.length ? Number(fields[n - 3]) : Number.NaN);
}
