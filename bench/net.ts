// The host's overhead on httpGet: `net.httpGet(url)` to a loopback server through tacit,
// per request, against Node's own fetch of the same URL. The tacit figure is
// (t(N) - t(0)) / N over whole runs, so start-up cancels out. The issue sets no target.

import { spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { median } from "./measure.js";
import { heavyRuns, line, ms, tacitBin, tempDir } from "./helpers.js";

const REQUESTS = 200;

function timeRun(args: string[], cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("close", (code) => {
      if (code !== 0 || stdout.trim() !== "ok") reject(new Error(`net bench: tacit exited ${code}: ${stderr.slice(0, 500)}`));
      else resolve(performance.now() - started);
    });
  });
}

export async function benchNet(runs: number): Promise<boolean> {
  const samples = heavyRuns(runs);
  const server = createServer((_request, response) => response.end("hello"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}/`;
  const dir = tempDir("net");
  try {
    const script = (n: number): string => {
      const file = path.join(dir, `net-${n}.ts`);
      writeFileSync(
        file,
        `requestNetwork(["127.0.0.1:${port}"], (net) => { let ok = true; for (let i = 0; i < ${n}; i++) ok = ok && net.httpGet("${url}") === "hello"; println(ok ? "ok" : "wrong"); });\n`,
      );
      return file;
    };
    const args = (file: string): string[] => [tacitBin, "run", "--no-check", "--network-permissions", `127.0.0.1:${port}`, file];
    const withRequests = args(script(REQUESTS));
    const without = args(script(0));

    const direct: number[] = [];
    const withTimes: number[] = [];
    const withoutTimes: number[] = [];
    for (let round = 0; round < samples + 1; round++) {
      const started = performance.now();
      for (let i = 0; i < REQUESTS; i++) await (await fetch(url)).text();
      const perFetch = (performance.now() - started) / REQUESTS;
      const a = await timeRun(withRequests, dir);
      const b = await timeRun(without, dir);
      if (round === 0) continue; // warm-up
      direct.push(perFetch);
      withTimes.push(a);
      withoutTimes.push(b);
    }
    const perGet = (median(withTimes) - median(withoutTimes)) / REQUESTS;
    const floor = median(direct);
    console.log(`\nhttpGet: ${REQUESTS} requests to a loopback server per run (${samples} runs each; BENCH_RUNS/3, min 3)`);
    line("floor: Node fetch() of the same URL", `${ms(floor)} per request   (floor)`);
    line(`tacit run (${REQUESTS} × httpGet)`, ms(median(withTimes)));
    line("tacit run (scope only)", ms(median(withoutTimes)));
    line("tacit per httpGet (t(N) - t(0)) / N", `${ms(perGet)} per request   ${(perGet / floor).toFixed(2)}x floor (no target)`);
    return true;
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
