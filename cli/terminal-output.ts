// Where tacit shows a script's output or errors to a person: on a terminal, through
// terminalSafe, so that the agent's text cannot drive the terminal; anywhere else (a pipe, a
// file) byte for byte, as the script wrote it.

import { terminalSafe } from "../runner/printable.js";

export function writeShown(stream: NodeJS.WriteStream, text: string): void {
  stream.write(stream.isTTY ? terminalSafe(text) : text);
}
