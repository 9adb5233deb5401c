// `tacit serve` asks the person behind the MCP client through elicitation. A client that did
// not declare the capability cannot ask anyone, so the answer is no.

import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { quotedName } from "../mcp-arguments.js";
import { ASK_TIMEOUT_MS, type ApprovalQuestion, type Asker, questionText, rowsWithin } from "./askers.js";

/** The result schema the question is asked with: any JSON (judgeAnswer judges it). */
const ANY_RESULT = z.unknown();

const ACTIONS = ["accept", "decline", "cancel"] as const;

/**
 * What the client answered: accept (a yes only with approve true), decline or cancel; or what
 * was wrong with it, in words, for a reply that is none of them.
 */
export function judgeAnswer(result: unknown): { action: (typeof ACTIONS)[number]; yes: boolean } | { malformed: string } {
  if (!isPlainObject(result)) return { malformed: `it was ${described(result)}, not an object` };
  const action = result.action;
  if (typeof action !== "string" || !(ACTIONS as readonly string[]).includes(action)) {
    return { malformed: `its "action" was ${described(action)}, not "accept", "decline" or "cancel"` };
  }
  if (action !== "accept") return { action: action as (typeof ACTIONS)[number], yes: false };
  const content = result.content;
  if (!isPlainObject(content)) return { malformed: `it accepted with ${content === undefined ? "no" : `a "content" that was ${described(content)}, not an`} object holding "approve"` };
  if (typeof content.approve !== "boolean") return { malformed: `it accepted with "approve" ${described(content.approve)}, not true or false` };
  return { action: "accept", yes: content.approve };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A value of the client's, in a few words: a string quoted (cut if long), anything else by its kind. */
function described(value: unknown): string {
  if (value === undefined) return "missing";
  if (typeof value === "string") return quotedName(value);
  if (value === null || typeof value === "number" || typeof value === "boolean") return String(value);
  return Array.isArray(value) ? "an array" : `a ${typeof value}`;
}

/** An error's message on one line, at most 300 characters: a client's error may hold line breaks, or a whole document. */
function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length <= 300 ? line : `${line.slice(0, 300)}…`;
}

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
  const body = lines.flatMap(wrapped).join("\n");
  let longestRun = 0;
  for (const run of body.match(/`+/g) ?? []) longestRun = Math.max(longestRun, run.length);
  const fence = "`".repeat(Math.max(3, longestRun + 1));
  return [heading, fence, body, fence].join("\n");
}

/** The widest row of a fenced block in a question, in columns (see wrapped). */
export const MESSAGE_COLUMNS = 72;
/**
 * A line of the question as rows of at most MESSAGE_COLUMNS (see rowsWithin). A code block is
 * shown as written, and so is not wrapped: a client shows a long line in part, the rest beyond a
 * scroll to the right. A security review's `git push origin main "<1,500 spaces>" --force` read
 * as `git push origin main "` with --force out of sight.
 */
function wrapped(line: string): string[] {
  return rowsWithin(line, MESSAGE_COLUMNS);
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
      let result: unknown;
      try {
        // Asked with a result schema that takes anything: the SDK's own (elicitInput) threw on a
        // malformed answer with its validator's issues as a multi-line JSON dump, which the refusal
        // quoted whole, then advised running "where it can ask". The answer is judged below instead.
        result = await server.request(
          {
            method: "elicitation/create",
            params: {
              mode: "form",
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
          },
          ANY_RESULT,
          // Aborted, the SDK withdraws the question (notifications/cancelled): a client takes it
          // off the person's screen rather than leave it there for a call that is gone.
          { timeout: ASK_TIMEOUT_MS, ...(signal ? { signal } : {}) },
        );
      } catch (error) {
        // The client can ask (it declared elicitation) but asking failed: told as "no one could be
        // asked", the refusal advised running "where it can ask", which it was.
        const timedOut = error instanceof McpError && error.code === ErrorCode.RequestTimeout;
        return {
          answer: "no",
          via: timedOut ? "elicitation (no answer in time)" : "elicitation (error)",
          askFailed: timedOut
            ? `no answer came within ${ASK_TIMEOUT_MS / 60_000} minutes`
            : `the client answered the question with an error instead of the user's answer: ${oneLine(error instanceof Error ? error.message : String(error))}`,
          fromPerson: false,
        };
      }
      const judged = judgeAnswer(result);
      // Fail closed: only an answer that says accept, with approve true, is a yes.
      if ("malformed" in judged) return { answer: "no", via: "elicitation (malformed answer)", malformed: judged.malformed, fromPerson: false };
      return { answer: judged.yes ? "yes" : "no", via: `elicitation (${judged.action})`, fromPerson: true };
    },
  };
}
