// `tacit serve` asks the person behind the MCP client through elicitation. A client that did
// not declare the capability cannot ask anyone, so the answer is no.

import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ASK_TIMEOUT_MS, type ApprovalQuestion, type Asker, questionText } from "./askers.js";

/**
 * The question as an elicitation message. Clients may show it as Markdown, HTML included, and
 * the lines after the first hold what the script chose (arguments, paths): a ninth security
 * review ran `git push "<!--" --force "-->"`, and a client that renders the message showed
 * `run: git push ""` (the HTML comment hid the rest) above the pattern `exec git push *`.
 * Those lines now stand in a fenced code block, shown as written. Nothing in them can end it:
 * the fence is longer than any run of backticks inside, and printable() has escaped every
 * line break the script's strings held.
 */
export function elicitationMessage(question: ApprovalQuestion): string {
  const [heading, ...lines] = questionText(question).split("\n");
  const body = lines.join("\n");
  let longestRun = 0;
  for (const run of body.match(/`+/g) ?? []) longestRun = Math.max(longestRun, run.length);
  const fence = "`".repeat(Math.max(3, longestRun + 1));
  return [heading, fence, body, fence].join("\n");
}

export function elicitationAsker(server: Server): Asker {
  return {
    async ask(question, signal) {
      if (!server.getClientCapabilities()?.elicitation) {
        return {
          answer: "no",
          via: "no-one-to-ask",
          unavailable: "the MCP client does not support elicitation, so its user cannot be asked",
          fromPerson: false,
        };
      }
      try {
        const result = await server.elicitInput(
          {
            message: elicitationMessage(question),
            requestedSchema: {
              type: "object",
              properties: {
                approve: {
                  type: "boolean",
                  title: "Allow it",
                  description: question.tier === "approve-once" ? "yes is remembered for 30 days and covers every later action with this pattern, whatever it writes or sends" : "asked every time",
                },
              },
              required: ["approve"],
            },
          },
          // Aborted, the SDK withdraws the question (notifications/cancelled): a client takes it
          // off the person's screen rather than leave it there for a call that is gone.
          { timeout: ASK_TIMEOUT_MS, ...(signal ? { signal } : {}) },
        );
        const yes = result.action === "accept" && result.content?.approve === true;
        return { answer: yes ? "yes" : "no", via: `elicitation (${result.action})`, fromPerson: true };
      } catch (error) {
        return {
          answer: "no",
          via: "no-one-to-ask",
          unavailable: `asking through the MCP client failed (${error instanceof Error ? error.message : String(error)})`,
          fromPerson: false,
        };
      }
    },
  };
}
