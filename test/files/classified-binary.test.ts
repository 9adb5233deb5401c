// A classified file that is not UTF-8 text (a .p12 key store, a DER key: default classified
// patterns) cannot be read as a Classified value: readClassified decoded it as UTF-8, every
// invalid sequence becoming U+FFFD, so a copy made with writeClassified held other bytes, and
// one written back to the same path destroyed the key store, without a word. The read is
// refused, naming the path and saying what to do, and saying nothing else of the content (no
// offset, byte or length). Valid UTF-8 (a leading BOM, NUL bytes, CRLF) still copies byte for
// byte.

import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, makeCanary, realTempDir, tacit, writeTree } from "./fixtures.js";

let root: string;
let cleanup: () => void;
const canary = makeCanary();

/** A key store as a PKCS#12 file starts (DER), bytes no UTF-8 decoder takes, and the canary among them. */
const keyStore = Buffer.concat([
  Buffer.from([0x30, 0x82, 0x0a, 0x51, 0x02, 0x01, 0x03, 0x30, 0x82, 0x0a, 0x17, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01]),
  Buffer.from(canary, "latin1"),
  Buffer.from([0xff, 0xfe, 0x80, 0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0xf0, 0x90, 0x28, 0xbc, 0x00, 0x9f, 0xfb]),
]);

/** Files that are not UTF-8 in the ways a strict decoder knows, each classified by default. */
const notUtf8: Record<string, Buffer> = {
  "store.p12": keyStore,
  // A character cut at the end of the file (E2 82 begins the euro sign).
  "truncated.key": Buffer.concat([Buffer.from(`TOKEN=${canary}`), Buffer.from([0xe2, 0x82])]),
  // A surrogate encoded as UTF-8 (CESU-8), which UTF-8 forbids.
  "surrogate.key": Buffer.concat([Buffer.from(`TOKEN=${canary}`), Buffer.from([0xed, 0xa0, 0x80])]),
  // "/" in two bytes (an overlong form).
  "overlong.key": Buffer.concat([Buffer.from(`TOKEN=${canary}`), Buffer.from([0xc0, 0xaf])]),
};

/** Valid UTF-8 that must keep every byte through readClassified and writeClassified. */
const validUtf8: Record<string, Buffer> = {
  ".env.bom": Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`TOKEN=${canary}\n`)]),
  ".env.nul": Buffer.from(`A=${canary}\0B=\0\0end\n`),
  ".env.crlf": Buffer.from(`A=${canary}\r\nB=2\r\n\r\n`),
  ".env.wide": Buffer.from(`A=${canary} é € 𝄞 \u{10FFFF}\n`),
};

const refusal = (file: string): string =>
  `${path.join(root, file)}: is not UTF-8 text (a binary file, such as a key store?); readClassified() reads a classified file as text and ` +
  "would have changed its bytes, so nothing was read. tacit cannot carry a binary classified file's bytes as a Classified value: " +
  "copy or move it with a command outside tacit.";

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-files-classified-binary-"));
  writeTree(root, { ...notUtf8, ...validUtf8 });
});
afterAll(() => cleanup());

describe("readClassified of a classified file that is not UTF-8", () => {
  it("is refused, naming the path and what to do: a copy is not made, the file written back keeps every byte", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("copy", () => fs.writeClassified("copy.p12", fs.readClassified("store.p12")));
  attempt("same path", () => fs.writeClassified("store.p12", fs.readClassified("store.p12")));
  attempt("entry", () => fs.access("store.p12").writeClassified(fs.access("store.p12").readClassified()));
  // A classified write still pending (its value takes a second) does not put the read off.
  fs.writeClassified(".env.slow", classify("slow").map((s) => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000); return s; }));
  attempt("behind a pending write", () => fs.writeClassified("copy-2.p12", fs.readClassified("store.p12")));
  for (const name of ${JSON.stringify(Object.keys(notUtf8).filter((name) => name !== "store.p12"))}) {
    attempt(name, () => fs.writeClassified(name, fs.readClassified(name)));
  }
});
`;
    const r = await tacit(root, script);
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    const refusals: Array<[string, string]> = [
      ["copy", "store.p12"],
      ["same path", "store.p12"],
      ["entry", "store.p12"],
      ["behind a pending write", "store.p12"],
      ...Object.keys(notUtf8)
        .filter((name) => name !== "store.p12")
        .map((name): [string, string] => [name, name]),
    ];
    for (const [label, file] of refusals) {
      const { status, value } = attemptOf(found, label);
      expect(status, `${label}: ${JSON.stringify(value)}`).toBe("Error");
      // Word for word: the message holds nothing of the content (no byte, offset or length).
      expect(value, label).toBe(refusal(file));
    }
    for (const [name, bytes] of Object.entries(notUtf8)) expect(readFileSync(path.join(root, name)).equals(bytes), `${name} changed`).toBe(true);
    for (const name of ["copy.p12", "copy-2.p12"]) expect(existsSync(path.join(root, name)), `${name} was made`).toBe(false);
    expect(r.stdout + r.stderr).not.toContain(canary);
    expect(r.stdout + r.stderr).not.toContain(String(keyStore.length));
  }, 60_000);

  it("a leading BOM, NUL bytes, CRLF and characters past ASCII are UTF-8: copied and written back byte for byte", async () => {
    const names = Object.keys(validUtf8);
    const script = `
requestFileSystem(".", (fs) => {
  for (const name of ${JSON.stringify(names)}) {
    fs.writeClassified(name + ".copy", fs.readClassified(name));
    fs.writeClassified(name, fs.readClassified(name));
  }
  println("done");
});
`;
    const r = await tacit(root, script);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("done\n");
    for (const [name, bytes] of Object.entries(validUtf8)) {
      expect(readFileSync(path.join(root, name)).equals(bytes), `${name} changed`).toBe(true);
      expect(readFileSync(path.join(root, `${name}.copy`)).equals(bytes), `${name}.copy differs`).toBe(true);
    }
    expect(r.stdout + r.stderr).not.toContain(canary);
  }, 60_000);
});
