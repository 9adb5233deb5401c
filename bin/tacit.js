#!/usr/bin/env node
// The `tacit` command. The CLI is a CommonJS bundle (dist/bundle), compiled through a V8
// code cache (dist/cli/code-cache.js) so that a short run does not spend its time compiling.
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { installCodeCache, saveCodeCache } from "../dist/cli/code-cache.js";

const bundleDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "dist", "bundle");
installCodeCache(path.resolve(bundleDir));
const require = createRequire(import.meta.url);
// `tacit run` starts its sandbox before the rest of tacit loads.
const prestarted = require(path.join(bundleDir, "prestart.cjs")).prestartFromArgv(process.argv);
const { main } = require(path.join(bundleDir, "tacit.cjs"));

const code = await main(process.argv, prestarted);
saveCodeCache();
// Exit explicitly (a producer still writing to our stdin must not keep tacit alive), but
// only once everything written to stdout and stderr has been handed to the OS: a pipe to a
// slow reader may still hold output.
let pending = 2;
const done = () => {
  if (--pending === 0) process.exit(code);
};
process.stdout.write("", done);
process.stderr.write("", done);
