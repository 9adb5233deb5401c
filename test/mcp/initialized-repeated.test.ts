// tacit serve pings its client once, after the first notifications/initialized (so that no
// question is ever request 0: see serve). Each one sent a ping, which waited a minute for its
// answer: a client repeating the notification made the server hold as many requests of its own
// (400,000 notifications made 50,000 pings and took it from 63 MB to 240 MB).

import { expect, it } from "vitest";
import { tempDirWithHome } from "../helpers.js";
import { rawClient } from "./raw-client.js";

it("a repeated notifications/initialized makes no more pings than the first", async () => {
  const { dir, env, cleanup } = tempDirWithHome("tacit-initialized-repeated-");
  const client = rawClient<{ id?: unknown; method?: string }>(["--quiet"], dir, env);
  try {
    await client.initialize();
    client.child.stdin.write(client.line({ jsonrpc: "2.0", method: "notifications/initialized" }).repeat(2000));
    // Read in order: once this is answered, any ping the notifications made has been written.
    client.send({ jsonrpc: "2.0", id: "after", method: "ping" });
    await client.answer("after");
    expect(client.responses.filter((r) => r.method === "ping")).toHaveLength(1);
  } finally {
    client.close();
    cleanup();
  }
});
