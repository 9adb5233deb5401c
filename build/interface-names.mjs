// Writes dist/interface-names.json: the names library/interface.d.ts declares and its digest,
// with the text they were made from. tacit uses them instead of parsing and hashing the
// interface at every start, as long as the text is the same (runner/interface-file.ts).
import { readFileSync, writeFileSync } from "node:fs";
import { namesFromInterface } from "../dist/runner/globals.js";
import { interfaceNamesPath, interfacePath } from "../dist/runner/paths.js";
import { textDigest } from "../dist/runner/typecheck-cache.js";

const source = readFileSync(interfacePath, "utf8");
writeFileSync(interfaceNamesPath, JSON.stringify({ source, digest: textDigest(source), ...namesFromInterface(source) }) + "\n");
