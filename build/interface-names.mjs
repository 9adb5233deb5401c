// Writes dist/interface-names.json: the names library/interface.d.ts declares, with the text
// they were read from. tacit uses them instead of parsing the interface at every start, as
// long as the text is the same (runner/globals.ts: loadInterfaceNames).
import { readFileSync, writeFileSync } from "node:fs";
import { namesFromInterface } from "../dist/runner/globals.js";
import { interfaceNamesPath, interfacePath } from "../dist/runner/paths.js";

const source = readFileSync(interfacePath, "utf8");
writeFileSync(interfaceNamesPath, JSON.stringify({ source, ...namesFromInterface(source) }) + "\n");
