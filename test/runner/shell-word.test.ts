// Shell text split into words as the shell reads it (runner/shell-word.ts): the checks that find
// the files a configuration makes a shell run later rely on it, so where a real shell can say
// what the words are, it is asked and the two must agree.

import { execFileSync } from "node:child_process";
import { homedir } from "node:os";
import { describe, expect, it } from "vitest";
import { shellWords, singleQuoted } from "../../runner/shell-word.js";

/**
 * The arguments /bin/sh gives a command written as `<command> <text>` (no expansions in `text`), for
 * each text, or null where the shell refuses it (not shell syntax: an unterminated quote). One shell
 * for all: each text's program, the one `sh -c` was given for it alone, is evaluated in a subshell
 * of its own with no positional parameters (as `sh -c` has none), whose syntax error ends only that
 * subshell. Checked against a `sh -c` for each text on 4,250 random texts (these alphabets, and one
 * with ; | & ( ) and newlines): the same words, and the same texts refused.
 */
function fromShell(texts: readonly string[]): Array<string[] | null> {
  const programs = texts.map((text) => `set -- ${text}\nfor word do printf '%s\\0' "$word"; done`);
  const out = execFileSync("/bin/sh", ["-c", `for program do ( set --; eval "$program" ); printf '\\1%d\\1' "$?"; done`, "sh", ...programs], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  // Each text's words (NUL-ended), then \1 its subshell's status \1: no text here holds a \1.
  const parts = out.split("\x01");
  expect(parts.length, "one status per text").toBe(2 * texts.length + 1);
  return texts.map((_, index) => (parts[2 * index + 1] === "0" ? parts[2 * index]!.split("\0").slice(0, -1) : null));
}

/** Python's shlex.split of each text (one Python for all), or null where shlex refuses it (an unterminated quote). */
function fromShlex(texts: readonly string[]): Array<string[] | null> {
  const program = "import json, shlex, sys\n" + "def split(t):\n    try:\n        return shlex.split(t)\n    except ValueError:\n        return None\n" + "json.dump([split(t) for t in json.load(sys.stdin)], sys.stdout)";
  return JSON.parse(execFileSync("python3", ["-c", program], { input: JSON.stringify(texts), encoding: "utf8" })) as Array<string[] | null>;
}

const texts = (text: string, options = {}) => shellWords(text, options).map((word) => word.text);

describe("shellWords", () => {
  it("agrees with /bin/sh on quotes, escapes and pieces joined into one word", () => {
    const cases = [
      "sh scripts/deploy.sh",
      `sh scr"ipts"/deploy.sh`,
      `./to'ols'/x.sh --flag`,
      `"my tools/run.sh" 'a b' c\\ d`,
      `a"b"'c'd\\e`,
      `"a\\"b" "x\\$y" "p\\q" 'r\\s'`,
      `'' "" x`,
      `one\\\ntwo "three\\\nfour"`,
      "  leading   and\ttrailing  ",
      "a#b #comment here",
      `"#not a comment" x`,
      "",
    ];
    const shell = fromShell(cases);
    cases.forEach((text, index) => expect(texts(text), text).toEqual(shell[index]));
  });

  it("agrees with /bin/sh on random text of quotes, backslashes, comments, tildes and blanks", () => {
    let seed = 20261204;
    const next = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const alphabet = ["a", "b", "/", " ", "\t", "'", '"', "\\", "#", "~", "x"];
    const cases: string[] = [];
    for (let round = 0; round < 250; round++) {
      let text = "";
      for (let length = 1 + Math.floor(next() * 14); length > 0; length--) text += alphabet[Math.floor(next() * alphabet.length)];
      cases.push(text);
    }
    const shell = fromShell(cases);
    let compared = 0;
    cases.forEach((text, index) => {
      // Not shell syntax (an unterminated quote): the shell gives no words to compare.
      if (shell[index] === null) return;
      compared++;
      expect(texts(text, { home: homedir() }), JSON.stringify(text)).toEqual(shell[index]);
    });
    expect(compared).toBeGreaterThan(100);
  });

  it("ends a word at an operator, as the shell does", () => {
    expect(texts("./a.sh;./b.sh&&c||d|e")).toEqual(["./a.sh", "./b.sh", "c", "d", "e"]);
    expect(texts("make >build.log 2>&1 <in (cd web) ")).toEqual(["make", "build.log", "2", "1", "in", "cd", "web"]);
    expect(texts(`"a;b" 'c|d'`)).toEqual(["a;b", "c|d"]);
  });

  it("leaves an expansion as written and says so; a known variable or ~ becomes its value", () => {
    expect(shellWords(`$HOME/bin "\${X:-d}/y" $(pwd)/z \`pwd\`/w '$literal' \\$notvar`)).toEqual([
      { text: "$HOME/bin", expands: true },
      { text: "${X:-d}/y", expands: true },
      { text: "$(pwd)/z", expands: true },
      { text: "`pwd`/w", expands: true },
      { text: "$literal", expands: false },
      { text: "$notvar", expands: false },
    ]);
    expect(shellWords(`$PWD/bin "\${PWD}/tools" $PWDX $1 a$`, { known: { PWD: "/p" } })).toEqual([
      { text: "/p/bin", expands: false },
      { text: "/p/tools", expands: false },
      { text: "$PWDX", expands: true },
      { text: "$1", expands: true },
      { text: "a$", expands: false },
    ]);
    expect(texts(`~ ~/bin a~ "~/q" ~user`, { home: "/h" })).toEqual(["/h", "/h/bin", "a~", "~/q", "~user"]);
    // Nested and quoted brackets inside an expansion stay in it.
    expect(shellWords(`$(echo ") x" $(date))/f next`)).toEqual([
      { text: `$(echo ") x" $(date))/f`, expands: true },
      { text: "next", expands: false },
    ]);
  });

  it("reads an unterminated quote or expansion to the end of the text", () => {
    expect(texts(`sh 'scripts/a b.sh`)).toEqual(["sh", "scripts/a b.sh"]);
    expect(texts(`sh "scripts/x`)).toEqual(["sh", "scripts/x"]);
    expect(shellWords("a ${b")).toEqual([
      { text: "a", expands: false },
      { text: "${b", expands: true },
    ]);
  });

  it("agrees with Python's shlex.split in the shlex dialect (pre-commit's entry: no operators, expansions or comments)", () => {
    const cases: string[] = [
      "./a.sh;./b.sh $HOME/x `pwd` #no-comment ~/y",
      `scr"ipts"/deploy.sh 'a b' c\\ d "x\\$y" "q\\"r" 'p\\'`,
      `one\\\ntwo`,
      "",
    ];
    // And random text of quotes, backslashes, blanks and characters a shell would read otherwise.
    let seed = 7;
    const next = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const alphabet = ["a", "/", " ", "\t", "\n", "'", '"', "\\", "#", "~", "$", ";", "`"];
    for (let round = 0; round < 300; round++) {
      let text = "";
      for (let length = 1 + Math.floor(next() * 14); length > 0; length--) text += alphabet[Math.floor(next() * alphabet.length)];
      cases.push(text);
    }
    const split = fromShlex(cases);
    cases.forEach((text, index) => {
      if (split[index] !== null) expect(texts(text, { dialect: "shlex", home: "/h" }), JSON.stringify(text)).toEqual(split[index]);
    });
    expect(split.filter((words) => words !== null).length).toBeGreaterThan(100);
    expect(shellWords("$HOME/x", { dialect: "shlex" })).toEqual([{ text: "$HOME/x", expands: false }]);
  });

  it("splits back what singleQuoted made", () => {
    for (const text of ["plain", "it's", "a b\tc", `"$x"`, "\\"]) expect(texts(singleQuoted(text))).toEqual([text]);
  });
});
