// The validator's names come from library/interface.d.ts. The build writes them out
// (dist/interface-names.json) so a run need not parse the interface; that file counts only
// while it was made from the very same interface text.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { identifierSets, loadInterfaceNames, namesFromInterface } from "../../runner/globals.js";
import { readInterfaceFile } from "../../runner/interface-file.js";
import { interfaceNamesPath, interfacePath } from "../../runner/paths.js";
import { textDigest } from "../../runner/typecheck-cache.js";

const dir = mkdtempSync(path.join(tmpdir(), "tacit-globals-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the names the interface declares", () => {
  const parsed = namesFromInterface(readFileSync(interfacePath, "utf8"));

  it("are the ones the build wrote, and the validator uses", () => {
    expect(parsed.globals).toContain("requestFileSystem");
    expect(parsed.exports).toContain("println");
    expect(parsed.typeExports).toContain("FileSystem");
    expect(loadInterfaceNames(interfacePath, interfaceNamesPath)).toEqual(parsed);
    const sets = identifierSets();
    expect([...sets.tacitGlobals]).toEqual(parsed.globals);
    expect(sets.allowedGlobals.has("requestFileSystem") && sets.allowedGlobals.has("Math")).toBe(true);
    expect(sets.allowedGlobals.has("Deno")).toBe(false);
  });

  it("are parsed again when the written file was made from another interface text", () => {
    const interfaceFile = path.join(dir, "interface.d.ts");
    const prebuilt = path.join(dir, "names.json");
    writeFileSync(interfaceFile, "declare function onlyThis(): void;\ndeclare module \"tacit\" { export function onlyThis(): void; }\n");
    // Names that would let `Deno` through, made from different text: ignored.
    writeFileSync(prebuilt, JSON.stringify({ source: "something else", globals: ["Deno"], exports: ["Deno"], typeExports: [] }));
    expect(loadInterfaceNames(interfaceFile, prebuilt)).toEqual({ globals: ["onlyThis"], exports: ["onlyThis"], typeExports: [] });
  });

  it("are parsed again when the written file is missing or malformed", () => {
    const interfaceFile = path.join(dir, "interface2.d.ts");
    const text = "declare function a(): void;\n";
    writeFileSync(interfaceFile, text);
    expect(loadInterfaceNames(interfaceFile, path.join(dir, "missing.json")).globals).toEqual(["a"]);
    const malformed = path.join(dir, "malformed.json");
    writeFileSync(malformed, JSON.stringify({ source: text, globals: [1], exports: [], typeExports: [] }));
    expect(loadInterfaceNames(interfaceFile, malformed).globals).toEqual(["a"]);
    writeFileSync(malformed, "{ not json");
    expect(loadInterfaceNames(interfaceFile, malformed).globals).toEqual(["a"]);
  });
});

describe("the interface's digest (the type-check cache's identity)", () => {
  it("is the one the build wrote, while the text is the same", () => {
    const source = readFileSync(interfacePath, "utf8");
    expect(readInterfaceFile(interfacePath, interfaceNamesPath).digest).toBe(textDigest(source));
  });

  it("is not taken from a file made from another text, nor when it is malformed", () => {
    const interfaceFile = path.join(dir, "interface3.d.ts");
    const text = "declare function b(): void;\n";
    writeFileSync(interfaceFile, text);
    const prebuilt = path.join(dir, "digest.json");
    const names = { globals: ["b"], exports: [], typeExports: [] };
    writeFileSync(prebuilt, JSON.stringify({ source: "another text", digest: "0".repeat(28), ...names }));
    expect(readInterfaceFile(interfaceFile, prebuilt).digest).toBeNull();
    writeFileSync(prebuilt, JSON.stringify({ source: text, digest: "not hex", ...names }));
    expect(readInterfaceFile(interfaceFile, prebuilt)).toEqual({ source: text, names, digest: null });
    writeFileSync(prebuilt, JSON.stringify({ source: text, digest: textDigest(text), ...names }));
    expect(readInterfaceFile(interfaceFile, prebuilt).digest).toBe(textDigest(text));
  });
});
