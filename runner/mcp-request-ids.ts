// A request whose id is that of a request of the client's still under way. The MCP SDK keys what it
// keeps of a request under way (the abort controller its cancellation reaches) by its id, so a second
// request with the id replaced the first's: the client's cancellation of that id stopped only the
// second, and the first ran on to its end (a call writing a file wrote it, though the client had
// cancelled the id), and, once either ended, the other could not be cancelled at all. JSON-RPC and
// MCP say an id is never reused while its request is under way; such a request is now answered with
// InvalidRequest, and nothing in it runs.

import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, isJSONRPCNotification, isJSONRPCRequest, type JSONRPCMessage, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { quotedName } from "./mcp-arguments.js";

/** The id an answer (a result or an error) goes to, or undefined for any other message. */
function answeredId(message: JSONRPCMessage): RequestId | undefined {
  return ("result" in message || "error" in message) && "id" in message ? (message.id as RequestId) : undefined;
}

/** tacit's own answers to requests it never passed on to the server (see answerToUnseen). */
const answersToUnseen = new WeakSet<object>();

/**
 * `answer`, marked as tacit's answer to a request it answered itself before the server or the check
 * below saw it (a message longer than it reads, one the SDK cannot read, one read past what it keeps):
 * sent, it ends no request under way. Such an answer bears the request's id, which may be that of
 * another request still under way: it freed that id, a later request with it was taken, and the
 * client's cancellation of the id reached only that one, the first running on to write its file.
 */
export function answerToUnseen<T extends object>(answer: T): T {
  answersToUnseen.add(answer);
  return answer;
}

function idText(id: RequestId): string {
  return typeof id === "string" ? quotedName(id) : String(id);
}

/**
 * Answers each request whose id is one under way with InvalidRequest. An id is under way from its
 * request until its answer is sent, or its cancellation comes (the SDK sends no answer to a
 * cancelled request). Install it after anything that replaces `transport.send` (unread-answers.ts),
 * and before anything whose `onmessage` must see every message (mcp-stdin.ts answerUnreadableRequests).
 */
export function refuseRequestIdsUnderWay(transport: Transport): void {
  const deliver = transport.onmessage;
  if (!deliver) throw new Error("tacit: connect the server to the transport before watching its request ids");
  const send = transport.send.bind(transport);
  const underWay = new Set<RequestId>();
  transport.send = (message, options) => {
    const id = answeredId(message);
    if (id !== undefined && !answersToUnseen.has(message)) underWay.delete(id);
    return send(message, options);
  };
  transport.onmessage = (message, extra) => {
    if (isJSONRPCRequest(message)) {
      if (underWay.has(message.id)) {
        const problem =
          `request ${quotedName(message.method)} has the id ${idText(message.id)}, which a request of this client's still under way has, and nothing in it ran: ` +
          "an id names one request until it is answered (a cancellation of the id would reach only one of them). Send it again with an id not in use";
        // Sent past the wrapper above: this answer ends no request under way.
        void send({ jsonrpc: "2.0", id: message.id, error: { code: ErrorCode.InvalidRequest, message: problem } }).catch(() => undefined);
        return;
      }
      underWay.add(message.id);
    } else if (isJSONRPCNotification(message) && message.method === "notifications/cancelled") {
      const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof requestId === "string" || typeof requestId === "number") underWay.delete(requestId);
    }
    deliver(message, extra);
  };
}
