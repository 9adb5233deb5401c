// `tacit serve` asks the person behind the MCP client through elicitation. A client that did
// not declare the capability cannot ask anyone, so the answer is no.

import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ASK_TIMEOUT_MS, type Asker, questionText } from "./askers.js";

export function elicitationAsker(server: Server): Asker {
  return {
    async ask(question) {
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
            message: questionText(question),
            requestedSchema: {
              type: "object",
              properties: {
                approve: {
                  type: "boolean",
                  title: "Allow it",
                  description: question.tier === "approve-once" ? "yes is remembered for 30 days" : "asked every time",
                },
              },
              required: ["approve"],
            },
          },
          { timeout: ASK_TIMEOUT_MS },
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
