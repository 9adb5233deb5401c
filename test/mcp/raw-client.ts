// tacit serve driven by a raw JSON-RPC client: for what an SDK client does not send (a call and
// its cancellation in one write, requests the SDK's schema refuses). Lines go in as written; the
// server's answers are collected as they come.

import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { childEnv, tacitBin } from "../helpers.js";

export interface RawClient<R extends { id?: unknown }> {
  child: ChildProcessWithoutNullStreams;
  /** The server's answers so far, in order. */
  responses: R[];
  /** One message as one line. */
  line(message: unknown): string;
  /** Writes one message (or raw text, as it is). */
  send(message: unknown): void;
  /** The answer to `id`, once it has come; fails if the server ends first. */
  answer(id: unknown): Promise<R>;
  /** initialize, its answer, and the initialized notification. */
  initialize(): Promise<void>;
  /** Ends the client's input and the server. */
  close(): void;
}

export function rawClient<R extends { id?: unknown }>(args: string[], cwd: string, env: Record<string, string>): RawClient<R> {
  const child = spawn(process.execPath, [tacitBin, "serve", ...args], { cwd, env: childEnv(env), stdio: ["pipe", "pipe", "pipe"] });
  const responses: R[] = [];
  let buffered = "";
  child.stdout.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    for (let newline = buffered.indexOf("\n"); newline !== -1; newline = buffered.indexOf("\n")) {
      responses.push(JSON.parse(buffered.slice(0, newline)) as R);
      buffered = buffered.slice(newline + 1);
    }
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const line = (message: unknown): string => (typeof message === "string" ? message : JSON.stringify(message) + "\n");
  const send = (message: unknown): void => void child.stdin.write(line(message));
  const answer = async (id: unknown): Promise<R> => {
    while (!responses.some((r) => r.id === id) && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 20));
    const found = responses.find((r) => r.id === id);
    if (!found) throw new Error(`tacit serve ended before answering ${String(id)}: ${stderr}`);
    return found;
  };
  return {
    child,
    responses,
    line,
    send,
    answer,
    initialize: async () => {
      send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } } });
      await answer(1);
      send({ jsonrpc: "2.0", method: "notifications/initialized" });
    },
    close: () => {
      child.stdin.end();
      child.kill();
    },
  };
}
