#!/usr/bin/env node
import { main } from "../dist/bundle/tacit.js";

const code = await main(process.argv);
// Exit explicitly: a producer still writing to our stdin must not keep tacit alive.
process.exit(code);
