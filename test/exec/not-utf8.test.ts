// Command output that is not UTF-8, through the real CLI and real commands: it is read as UTF-8
// as before (what is not becomes U+FFFD), and no longer silently: the stream ends with a note
// that names it and says what to do. Output that is UTF-8 (a U+FFFD of its own included) has
// no note, and neither has UTF-8 that the 8 MiB limit cut inside a character (the cut
// character is left out, not shown as U+FFFD).

import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attemptOf, attempts, ATTEMPT_PRELUDE, realTempDir, tacit } from "./fixtures.js";

let root: string;
let cleanup: () => void;

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-exec-not-utf8-"));
  // "café" in Latin-1, and bytes that are UTF-8 in no reading.
  writeFileSync(path.join(root, "latin1.txt"), Buffer.from("caf\xe9\n", "latin1"));
  writeFileSync(path.join(root, "binary.sh"), "printf 'out \\377\\376 end\\n'; printf 'err \\300\\200\\n' >&2\n");
  writeFileSync(path.join(root, "utf8.txt"), "héllo ✓ \u{1F600} and a U+FFFD of its own: \uFFFD\n");
  // 9 MB of a three-byte character: 8 MiB (8388608 = 3 × 2796202 + 2) ends two bytes into one.
  writeFileSync(path.join(root, "euros.txt"), "€".repeat(3_000_000));
});
afterAll(() => cleanup());

const NOTE = (stream: string): string =>
  `\n[tacit: ${stream} was not valid UTF-8; bytes that could not be read as UTF-8 are shown as \uFFFD. For text, have the command write UTF-8 ` +
  "(an option of its own, or iconv); for its bytes, have it write them to a file in the roots and read that with readBytes()]\n";

describe("command output that is not UTF-8", () => {
  it("ends with a note naming the stream; UTF-8 output, and UTF-8 cut at the limit inside a character, has none", async () => {
    const result = await tacit(
      root,
      `${ATTEMPT_PRELUDE}
requestExecPermission(["cat", "bash"], (proc) => {
  attempt("latin1", () => proc.exec("cat", ["latin1.txt"]));
  attempt("latin1-execOutput", () => proc.execOutput("cat", ["latin1.txt"]));
  attempt("both-streams", () => proc.exec("bash", ["binary.sh"]));
  attempt("utf8", () => proc.exec("cat", ["utf8.txt"]));
  attempt("cut-utf8", () => {
    const { stdout } = proc.exec("cat", ["euros.txt"]);
    const marker = stdout.indexOf("\\n[tacit: output truncated");
    return { kept: stdout.slice(0, marker).length, allEuros: /^€*$/.test(stdout.slice(0, marker)), rest: stdout.slice(marker) };
  });
});
`,
      ["--command-permissions", "cat,bash"],
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    expect(attemptOf(found, "latin1")).toEqual({ status: "ok", value: { exitCode: 0, stdout: `caf\uFFFD\n${NOTE("stdout")}`, stderr: "" } });
    expect(attemptOf(found, "latin1-execOutput")).toEqual({ status: "ok", value: `caf\uFFFD\n${NOTE("stdout")}` });
    expect(attemptOf(found, "both-streams")).toEqual({
      status: "ok",
      value: { exitCode: 0, stdout: `out \uFFFD\uFFFD end\n${NOTE("stdout")}`, stderr: `err \uFFFD\uFFFD\n${NOTE("stderr")}` },
    });
    expect(attemptOf(found, "utf8")).toEqual({ status: "ok", value: { exitCode: 0, stdout: "héllo ✓ \u{1F600} and a U+FFFD of its own: \uFFFD\n", stderr: "" } });
    // 2796202 whole characters of the 8 MiB; the two bytes of the next one are left out, and no note.
    expect(attemptOf(found, "cut-utf8")).toEqual({
      status: "ok",
      value: { kept: 2_796_202, allEuros: true, rest: "\n[tacit: output truncated at 8388608 bytes; the rest was discarded]\n" },
    });
  });
});
