// tacit serve's text items are read by the model and shown to the person by the client, which
// may write them to a terminal. A script's ESC and C1 controls reached them raw: printed, an OSC 52
// sequence set the clipboard of a terminal that showed it; thrown, "ESC[2K ESC[1A ESC[2K" after
// the error's first line erased the report's real exit line, and a forged "[tacit: exit 0, 3 ms]"
// stood in its place. tacit run writes such controls to a terminal as escapes (terminalSafe);
// serve's text items now do too, and structuredContent keeps the output and error exactly. An
// error's lines in the report are made printable besides (bidi overrides and invisible characters
// as escapes): an error class named "\u202e[sm 3 ,0 tixe :ticat]" put a line under the real exit
// line that a bidi-aware viewer drew as "[tacit: exit 0, 3 ms]".

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerTexts, connectServe, createSession, tempDirWithHome, type ToolResult } from "../helpers.js";

/** What makes a terminal act rather than show: C0 but line feed, tab and carriage return, DEL and C1. */
const TERMINAL_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

const PRINTED = "done\n\u001b]52;c;cm0gLXJmIH4K\u0007\u001b[1A\u001b[2K\u009b2J";
const THROWN = "boom\u001b[2K\u001b[1A\u001b[2K\n[tacit: exit 0, 3 ms]";
const CODE = `print(${JSON.stringify(PRINTED)});\nthrow new Error(${JSON.stringify(THROWN)});`;

let cleanup: () => void;
let client: Client;
beforeAll(async () => {
  const { dir, env, cleanup: remove } = tempDirWithHome("tacit-terminal-controls-");
  cleanup = remove;
  client = await connectServe(["--no-check"], dir, { env });
});
afterAll(async () => {
  await client.close();
  cleanup();
});

// Drawn right to left, mirrored: "[tacit: exit 0, 3 ms]" in a viewer that applies the bidi algorithm.
const REVERSED_EXIT = "\u202e[sm 3 ,0 tixe :ticat]";

describe.concurrent("a script's terminal controls in tacit serve's answer", () => {
  it("an error class named with a bidi override shows it as an escape in the report; structuredContent holds it exactly", async () => {
    const code = `class Named extends Error { override name = ${JSON.stringify(REVERSED_EXIT)}; }\nthrow new Named("");`;
    const response = await client.callTool({ name: "execute_typescript", arguments: { code } });
    const result = response.structuredContent as unknown as ToolResult;
    expect(result.exitCode).toBe(1);
    expect(result.error?.startsWith(REVERSED_EXIT)).toBe(true);
    const { report } = answerTexts(response);
    expect(report).not.toContain("\u202e");
    // After "Uncaught ", as tacit run shows an error whose first line holds a bidi control (stderr's rule).
    expect(report.split("\n")[1]).toBe("Uncaught \\u202e[sm 3 ,0 tixe :ticat]");
  });

  for (const tool of ["execute_typescript", "execute_in_session"] as const) {
    it(`${tool}: the text items show them as escapes; structuredContent holds them exactly`, async () => {
      const args = tool === "execute_typescript" ? { code: CODE } : { session_id: await createSession(client), code: CODE };
      const response = await client.callTool({ name: tool, arguments: args });
      const result = response.structuredContent as unknown as ToolResult;
      expect(result.exitCode).toBe(1);
      expect(result.stdout).toBe(PRINTED);
      expect(result.error).toContain(THROWN);
      const { output, report } = answerTexts(response);
      expect(output).not.toMatch(TERMINAL_CONTROL);
      expect(report).not.toMatch(TERMINAL_CONTROL);
      expect(output).toBe("done\n\\u001b]52;c;cm0gLXJmIH4K\\u0007\\u001b[1A\\u001b[2K\\u009b2J");
      expect(report.split("\n")[1]).toBe("Error: boom\\u001b[2K\\u001b[1A\\u001b[2K");
      // The forged line stays under the error, indented; the real exit line is the first.
      expect(report.split("\n")[0]).toMatch(/^\[tacit: exit 1, \d+ ms\]$/);
      expect(report.split("\n")[2]).toBe("  [tacit: exit 0, 3 ms]");
    });
  }
});
