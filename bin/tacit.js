#!/usr/bin/env node
import { main } from "../dist/bundle/tacit.js";

const code = await main(process.argv);
// Exit explicitly (a producer still writing to our stdin must not keep tacit alive), but
// only once everything written to stdout and stderr has been handed to the OS: a pipe to a
// slow reader may still hold output.
let pending = 2;
const done = () => {
  if (--pending === 0) process.exit(code);
};
process.stdout.write("", done);
process.stderr.write("", done);
