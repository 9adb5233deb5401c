// Every refusal a script can cause names what was refused, why, and what to do instead. A
// red-team pass through `tacit run -` (the script on standard input, as in a pipeline) found one
// that stopped at "why": a request to a host outside the hosts its requestNetwork scope asked for
// ("localhost:1 is not among the hosts this requestNetwork scope asked for (127.0.0.1:1)"), where
// exec's says "ask for it in the list". The rest are kept here as they are, one line each.
// That advice was given for a host the operator does not permit as well (localhost:1 under
// --network-permissions 127.0.0.1:1), which no scope can ask for (requestNetwork refuses it): such
// a request now says that too, and that the operator can permit it.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runScript, tempDirWithHome } from "../helpers.js";

/** Each attempt prints "<name>: <error name>: <message>" (or NO ERROR). */
const ATTEMPTS: Record<string, string> = {
  "fs outside the roots": `requestFileSystem("/etc", (fs) => fs.access("passwd").read())`,
  "fs path out of its scope": `requestFileSystem(".", (fs) => fs.access("../../etc/passwd").read())`,
  "classified file read as text": `requestFileSystem(".", (fs) => fs.access(".env").read())`,
  "command not permitted": `requestExecPermission(["rm"], (p) => p.exec("rm", ["x"]))`,
  "command outside its scope": `requestExecPermission(["echo"], (p) => p.exec("ls"))`,
  "host not permitted": `requestNetwork(["evil.example"], (n) => n.httpGet("http://evil.example/"))`,
  "host outside its scope": `requestNetwork(["127.0.0.1:1"], (n) => n.httpGet("http://127.0.0.1:2/"))`,
  "host neither permitted nor in its scope": `requestNetwork(["127.0.0.1:1"], (n) => n.httpGet("http://localhost:1/"))`,
  "chat without a model": `chat("hi")`,
  "capability after its scope": `(() => { let kept: any; requestFileSystem(".", (fs) => { kept = fs; }); return kept.access("a").read(); })()`,
  "input when the script came on stdin": `readInput()`,
};

const SCRIPT = Object.entries(ATTEMPTS)
  .map(([name, code]) => `try { ${code}; println(${JSON.stringify(`${name}: NO ERROR`)}); } catch (e) { println(${JSON.stringify(`${name}: `)} + (e as Error).name + ": " + (e as Error).message.split("\\n")[0]); }`)
  .join("\n");

/** What each refusal must say: what, why, and what to do instead. */
const SAID: Record<string, RegExp> = {
  "fs outside the roots": /^SecurityError: requestFileSystem\("\/etc"\): \/etc is outside the allowed roots \(.*\)\. Ask for a directory inside one of them, or have the operator add it with --allowed-roots/,
  "fs path out of its scope": /^SecurityError: .*\/etc\/passwd: outside this file system scope \(.*\)\. Use a path under the root, or request a scope for the other directory\.$/,
  "classified file read as text": /^SecurityError: .*\/\.env: read refused: the path is classified \(it holds secrets\)\. Use readClassified\(\)/,
  "command not permitted": /^SecurityError: requestExecPermission: "rm" is not among the permitted commands \(echo, ls\); the operator can add it with --command-permissions/,
  "command outside its scope": /^SecurityError: exec\("ls"\): not among the commands this requestExecPermission scope asked for \(echo\); ask for it in the list$/,
  "host not permitted": /^SecurityError: requestNetwork: evil\.example is not permitted by --network-permissions \(127\.0\.0\.1:1, 127\.0\.0\.1:2\); the operator can add it there/,
  "host outside its scope": /^SecurityError: 127\.0\.0\.1:2 is not among the hosts this requestNetwork scope asked for \(127\.0\.0\.1:1\); ask for it in the list$/,
  "host neither permitted nor in its scope":
    /^SecurityError: localhost:1 is not among the hosts this requestNetwork scope asked for \(127\.0\.0\.1:1\), and it is not permitted by --network-permissions \(127\.0\.0\.1:1, 127\.0\.0\.1:2\) either: the operator can add it there \(config libraryConfig\.networkPermissions\), and then the script can ask for it in the list$/,
  "chat without a model": /^Error: chat: no model is configured; the operator sets one with --llm-base-url, --llm-api-key and --llm-model/,
  "capability after its scope": /^SecurityError: this capability was used outside its requestFileSystem scope: .*Do the work inside the block/,
  "input when the script came on stdin": /^Error: readInput\(\): standard input carried the script itself \(tacit run -\), so there is no piped data\. Save the script to a file and run `tacit run script\.ts` with the data piped in\.$/,
};

describe("refusals a script can cause say what, why, and what to do instead (tacit run -)", () => {
  let lines: Map<string, string>;
  let cleanup: () => void;

  beforeAll(async () => {
    const made = tempDirWithHome("tacit-refusal-advice-");
    cleanup = made.cleanup;
    writeFileSync(path.join(made.dir, ".env"), "TOKEN=x\n");
    const run = await runScript(SCRIPT, ["--no-check", "--command-permissions", "echo,ls", "--network-permissions", "127.0.0.1:1,127.0.0.1:2"], { cwd: made.dir, env: made.env });
    expect(run.code, run.stderr).toBe(0);
    lines = new Map(
      run.stdout
        .trimEnd()
        .split("\n")
        .map((line) => {
          const at = line.indexOf(": ");
          return [line.slice(0, at), line.slice(at + 2)] as [string, string];
        }),
    );
  }, 60_000);
  afterAll(() => cleanup());

  for (const [name, said] of Object.entries(SAID)) {
    it(name, () => {
      expect(lines.get(name)).toMatch(said);
    });
  }
});
