// What tacit serve's one-shot calls leave pending (PendingClassifiedWork, kept for the server's
// life) chained each call's last classified write onto the last one's with Promise.all, whose
// value is an array holding the one before: every call, even one that printed a line and wrote
// nothing, nested one more array in it, never let go (a red team's 1,000 calls left exactly
// 1,000 more arrays on the heap, chained from `lastWrite`). The chain is read here from a heap
// snapshot the real server writes on SIGUSR2, by a listener the test preloads (--require): tacit
// takes Node's own --heapsnapshot-signal away (bin/tacit.js: a snapshot holds every secret the
// host does, and was written into the working directory), which is what this test used before.

import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connectServe, tempDirWithHome, type ToolResult } from "../helpers.js";

const CALLS = 12;

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** A heap snapshot's nodes and their outgoing edges, by name. */
class Heap {
  private readonly nodeFields: number;
  private readonly edgeFields: number;
  private readonly firstEdge: Uint32Array;

  constructor(private readonly s: HeapSnapshot) {
    this.nodeFields = s.snapshot.meta.node_fields.length;
    this.edgeFields = s.snapshot.meta.edge_fields.length;
    const edgeCount = s.snapshot.meta.node_fields.indexOf("edge_count");
    const count = s.nodes.length / this.nodeFields;
    this.firstEdge = new Uint32Array(count + 1);
    for (let i = 0; i < count; i++) this.firstEdge[i + 1] = this.firstEdge[i]! + s.nodes[i * this.nodeFields + edgeCount]!;
  }

  get count(): number {
    return this.firstEdge.length - 1;
  }

  /** "object:Array", "closure:…": the node's type and name. */
  kind(node: number): string {
    const { meta } = this.s.snapshot;
    const type = meta.node_types[0][this.s.nodes[node * this.nodeFields + meta.node_fields.indexOf("type")]!]!;
    return `${type}:${this.s.strings[this.s.nodes[node * this.nodeFields + meta.node_fields.indexOf("name")]!]}`;
  }

  /** The nodes `node` points to by an edge named `name` (a property, an internal field, or an element's index). */
  edge(node: number, name: string): number[] {
    const { meta } = this.s.snapshot;
    const [typeAt, nameAt, toAt] = ["type", "name_or_index", "to_node"].map((field) => meta.edge_fields.indexOf(field)) as [number, number, number];
    const found: number[] = [];
    for (let e = this.firstEdge[node]!; e < this.firstEdge[node + 1]!; e++) {
      const type = meta.edge_types[0][this.s.edges[e * this.edgeFields + typeAt]!];
      const raw = this.s.edges[e * this.edgeFields + nameAt]!;
      const edgeName = type === "element" || type === "hidden" ? String(raw) : this.s.strings[raw];
      if (edgeName === name) found.push(this.s.edges[e * this.edgeFields + toAt]! / this.nodeFields);
    }
    return found;
  }
}

/** Asks the server for a heap snapshot and reads it once Node has written it whole. */
async function snapshotOf(pid: number, dir: string): Promise<Heap> {
  process.kill(pid, "SIGUSR2");
  for (;;) {
    const file = readdirSync(dir).find((name) => name.endsWith(".heapsnapshot"));
    if (file !== undefined) {
      try {
        return new Heap(JSON.parse(readFileSync(path.join(dir, file), "utf8")) as HeapSnapshot);
      } catch {
        // Still being written.
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

let dir: string;
let env: Record<string, string>;
let cleanup: () => void;
let client: Client;
beforeAll(async () => {
  ({ dir, env, cleanup } = tempDirWithHome("tacit-left-work-growth-"));
  const preload = path.join(dir, "snapshot-on-sigusr2.cjs");
  writeFileSync(
    preload,
    `const { renameSync } = require("node:fs");\nconst { writeHeapSnapshot } = require("node:v8");\n` +
      `process.on("SIGUSR2", () => renameSync(writeHeapSnapshot(${JSON.stringify(path.join(dir, "server.tmp"))}), ${JSON.stringify(path.join(dir, "server.heapsnapshot"))}));\n`,
  );
  client = await connectServe(["--no-check"], dir, { env: { ...env, NODE_OPTIONS: `--require=${preload}` } });
});
afterAll(async () => {
  await client.close();
  cleanup();
});

it(`${CALLS} one-shot calls leave no chain of ${CALLS} nested arrays behind what the server keeps pending`, async () => {
  for (let i = 0; i < CALLS; i++) {
    const response = await client.callTool({ name: "execute_typescript", arguments: { code: `println("call ${i}");` } });
    expect((response.structuredContent as unknown as ToolResult).exitCode).toBe(0);
  }
  const pid = (client.transport as StdioClientTransport).pid!;
  const heap = await snapshotOf(pid, dir);
  // What is pending: the object with writes, lastWrite, writesSettled and finishing (noPendingClassifiedWork).
  const depths: number[] = [];
  for (let node = 0; node < heap.count; node++) {
    if (!heap.kind(node).startsWith("object:")) continue;
    if (!["writes", "writesSettled", "finishing"].every((name) => heap.edge(node, name).length === 1)) continue;
    for (const lastWrite of heap.edge(node, "lastWrite")) {
      // The promise's value, then each array's first element, for as long as it is an array.
      let depth = 0;
      let value = heap.edge(lastWrite, "reactions_or_result")[0];
      while (value !== undefined && heap.kind(value) === "object:Array" && depth <= CALLS) {
        depth++;
        value = heap.edge(value, "0")[0];
      }
      depths.push(depth);
    }
  }
  // The server's own, and none nests a call's worth each.
  expect(depths.length).toBeGreaterThan(0);
  expect(Math.max(...depths)).toBeLessThan(3);
});
