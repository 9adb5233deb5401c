// The LLM key reaches tacit in its environment (TACIT_LLM_API_KEY) or on its command line
// (--llm-api-key), and Linux shows both to every process of the same user, as
// /proc/<pid>/environ and /proc/<pid>/cmdline. Permitted commands run with a /proc of their own
// where the host allows it (exec/pid-namespace.ts); where it does not, a permitted
// `grep -a -o 'TACIT_LLM_API_KEY=.\{12\}' /proc/<tacit's pid>/environ` printed part of the key,
// which host-secrets.ts does not recognise (it masks the whole key). So once tacit has read the
// key it blanks every copy of it in the two blocks the kernel shows them from, the process's
// initial arguments and environment, through /proc/self/mem (a process may write its own
// memory). tacit has read the key by then; process.env shows the blanked value afterwards.

import { closeSync, openSync, readSync, writeSync } from "node:fs";
import { readStatFields } from "./proc-stat.js";

/** The fields of /proc/self/stat (1-based, see proc(5)) that bound the two blocks. */
const ARG_START = 48;
const ENV_END = 51;

/**
 * Blanks each of `secrets` (with "*") wherever it lies in this process's argument and
 * environment blocks. Returns null when done or when there is nothing to blank; otherwise why
 * it could not be done (no /proc, a kernel that refuses the write), for a warning.
 */
export function blankInProcessInfo(secrets: ReadonlyArray<string | undefined>): string | null {
  const needles = [...new Set(secrets)].filter((s): s is string => typeof s === "string" && s.length > 0).map((s) => Buffer.from(s, "utf8"));
  if (process.platform !== "linux" || needles.length === 0) return null;
  let fd: number | null = null;
  try {
    const field = readStatFields("/proc/self/stat");
    if (field === null) return "this process's /proc/self/stat could not be read";
    const [argStart, argEnd, envStart, envEnd] = [field(ARG_START), field(ARG_START + 1), field(ENV_END - 1), field(ENV_END)];
    if (![argStart, argEnd, envStart, envEnd].every((n) => Number.isSafeInteger(n) && n > 0) || argEnd < argStart || envEnd < envStart) {
      return "the kernel did not say where this process's arguments and environment are";
    }
    fd = openSync("/proc/self/mem", "r+");
    for (const [start, end] of [
      [argStart, argEnd],
      [envStart, envEnd],
    ] as const) {
      const block = Buffer.alloc(end - start);
      const read = readSync(fd, block, 0, block.length, start);
      for (const needle of needles) {
        const stars = Buffer.alloc(needle.length, "*");
        for (let at = block.indexOf(needle); at !== -1 && at + needle.length <= read; at = block.indexOf(needle, at + needle.length)) {
          writeSync(fd, stars, 0, stars.length, start + at);
        }
      }
    }
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}
