#!/usr/bin/env node
// The `tacit` command. The CLI is a CommonJS bundle (dist/bundle), compiled through a V8
// code cache (dist/bundle/code-cache.cjs, from cli/code-cache.ts) so that a short run does not
// spend its time compiling. This file is CommonJS too (bin/package.json says so, while the
// command keeps its name): Node then starts it without setting up its ES module loader,
// about 8 ms of every run.
"use strict";
const path = require("node:path");
// V8 optimizes a function once it has run a budget of its bytecode (--interrupt-budget, 66 KiB in
// Node 20). A script's loop of requests runs the host's request path thousands of times from a
// cold start, and at the default its functions reached TurboFan only after 1,000-4,000 reads of
// a 10,000-read loop, which spent more time warming up than warm. A quarter of it: most are
// optimized within the first 1,000. Set before the bundle loads (the code cache is keyed by the
// flags), and the same at every start.
require("node:v8").setFlagsFromString("--interrupt-budget=16896");

const bundleDir = path.resolve(__dirname, "..", "dist", "bundle");
const { installCodeCache, saveCodeCache } = require(path.join(bundleDir, "code-cache.cjs"));
installCodeCache(bundleDir);
const prestart = require(path.join(bundleDir, "prestart.cjs"));
// Before anything is started: nothing tacit was handed beyond stdio may reach what it starts.
prestart.closeInheritedDescriptors();
// `tacit run` starts its sandbox before the rest of tacit loads.
const prestarted = prestart.prestartFromArgv(process.argv);
const { main, exitCodeAfterOutput } = require(path.join(bundleDir, "tacit.cjs"));

// A failure of main itself is an unhandled rejection: Node prints it and exits with 1.
void main(process.argv, prestarted).then((code) => {
  saveCodeCache();
  // Exit explicitly (a producer still writing to our stdin must not keep tacit alive), but
  // only once everything written to stdout and stderr has been handed to the OS: a pipe to a
  // slow reader may still hold output.
  let pending = 2;
  const done = () => {
    if (--pending === 0) process.exit(exitCodeAfterOutput(code));
  };
  process.stdout.write("", done);
  process.stderr.write("", done);
});
