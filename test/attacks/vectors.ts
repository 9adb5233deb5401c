// The attack scripts: each tries to reach the world (read the canary, reach the loopback
// listener, spawn a process, read the environment canary, write a file, signal a process)
// without a capability. The same script text is run three ways by suite.ts: through the real
// CLI (the validator must reject it, naming the rule), and with the validator bypassed, once
// with `Deno` left on globalThis and once with it hidden (the process permissions must hold).

import { type AttackContext, attempt, ENV_CANARY_NAME, lit, NODE_PRELUDE } from "./fixtures.js";

import type { RuleId } from "../../runner/validator.js";

export type { RuleId };

export interface Attack {
  name: string;
  /** Rules the validator must name (others may appear too). */
  rules: RuleId[];
  code: (ctx: AttackContext) => string;
  /** A static import: it fails while the module graph loads, before any line runs. */
  linkTime?: boolean;
}

const fileUrl = (p: string): string => `file://${p}`;

/** A Worker (blob: URL) that retries every reach from its own, fresh global scope. */
function workerSource(ctx: AttackContext): string {
  return `
const out = [];
async function tryIt(label, fn) {
  try { out.push(label + ": " + String(await fn())); } catch (e) { out.push(label + ": refused " + (e && e.name)); }
}
await tryIt("deno-global", () => typeof Deno);
await tryIt("read", () => Deno.readTextFileSync(${lit(ctx.canaryTxt)}));
await tryIt("fetch-file", async () => (await fetch(${lit(fileUrl(ctx.canaryTxt))})).text());
await tryIt("import-file", async () => (await import(${lit(fileUrl(ctx.canaryJs))})).default);
await tryIt("net", async () => (await fetch("http://127.0.0.1:${ctx.port}/")).status);
await tryIt("run", () => new Deno.Command(${lit(ctx.touch)}, { args: [${lit(ctx.marker)}] }).outputSync().code);
await tryIt("env", () => Deno.env.get(${lit(ENV_CANARY_NAME)}));
await tryIt("write", () => Deno.writeTextFileSync(${lit(ctx.written)}, "x"));
await tryIt("kill", () => Deno.kill(${ctx.victimPid}, "SIGKILL"));
postMessage(out.join("\\n"));
`;
}

function inWorker(source: string, options = '{ type: "module" }'): string {
  return attempt(`
  const url = URL.createObjectURL(new Blob([${lit(source)}], { type: "application/javascript" }));
  const worker = new Worker(url, ${options});
  const message = await new Promise((resolve) => {
    worker.onmessage = (event) => resolve(event.data);
    worker.onerror = (event) => { event.preventDefault(); resolve("worker error: " + event.message); };
  });
  worker.terminate();
  println(message);`);
}

// --- Reading the canary file --------------------------------------------------------------

export const FILE_READS: Attack[] = [
  {
    name: "Deno.readTextFileSync",
    rules: ["ambient-authority"],
    code: (c) => attempt(`  println(Deno.readTextFileSync(${lit(c.canaryTxt)}));`),
  },
  {
    name: "Deno reached by a computed name (globalThis[\"De\" + \"no\"])",
    rules: ["ambient-authority"],
    code: (c) => attempt(`  const runtime = (globalThis as any)["De" + "no"];
  println(runtime.readTextFileSync(${lit(c.canaryTxt)}));`),
  },
  {
    name: "Deno reached by a unicode-escaped identifier (\\u0044eno)",
    rules: ["ambient-authority"],
    code: (c) => attempt(`  println(\\u0044eno.readTextFileSync(${lit(c.canaryTxt)}));`),
  },
  {
    name: "Deno.open + read",
    rules: ["ambient-authority"],
    code: (c) =>
      attempt(`  const file = await Deno.open(${lit(c.canaryTxt)});
  const buffer = new Uint8Array(256);
  const n = await file.read(buffer);
  println(new TextDecoder().decode(buffer.subarray(0, n ?? 0)));`),
  },
  {
    name: "Deno.permissions.request, then read",
    rules: ["ambient-authority"],
    code: (c) =>
      attempt(`  const status = await Deno.permissions.request({ name: "read", path: ${lit(c.canaryTxt)} });
  println("permission:", status.state);
  println(Deno.readTextFileSync(${lit(c.canaryTxt)}));`),
  },
  {
    name: "fetch(file://)",
    rules: ["ambient-authority"],
    code: (c) => attempt(`  println(await (await fetch(${lit(fileUrl(c.canaryTxt))})).text());`),
  },
  {
    name: "node:fs readFileSync (dynamic import)",
    rules: ["dynamic-import"],
    code: (c) =>
      NODE_PRELUDE + attempt(`  const fs = await import("node:fs");
  println(fs.readFileSync(${lit(c.canaryTxt)}, "utf8"));`),
  },
  {
    name: "node:fs (static import)",
    rules: ["forbidden-import"],
    linkTime: true,
    code: (c) => `import { readFileSync } from "node:fs";\nprintln(readFileSync(${lit(c.canaryTxt)}, "utf8"));`,
  },
  {
    name: "static import of a local .js file",
    rules: ["forbidden-import"],
    linkTime: true,
    code: (c) => `import canary from ${lit(fileUrl(c.canaryJs))};\nprintln(canary);`,
  },
  {
    name: "static import of a local path (no scheme)",
    rules: ["forbidden-import"],
    linkTime: true,
    code: (c) => `import canary from ${lit(c.canaryJs)};\nprintln(canary);`,
  },
  {
    name: "static import of a local file as JSON",
    rules: ["forbidden-import"],
    linkTime: true,
    code: (c) => `import data from ${lit(fileUrl(c.canaryJson))} with { type: "json" };\nprintln(JSON.stringify(data));`,
  },
  {
    name: "static import of a local file as text",
    rules: ["forbidden-import"],
    linkTime: true,
    code: (c) => `import text from ${lit(fileUrl(c.canaryTxt))} with { type: "text" };\nprintln(text);`,
  },
  {
    // If Deno read it, the parse error would quote the file's first line (the canary).
    name: "static import of a non-JS file as a module",
    rules: ["forbidden-import"],
    linkTime: true,
    code: (c) => `import x from ${lit(fileUrl(c.canaryTxt))};\nprintln(x);`,
  },
  {
    name: "static import of a data: module that imports the file",
    rules: ["forbidden-import"],
    linkTime: true,
    code: (c) =>
      `import canary from ${lit("data:text/javascript," + encodeURIComponent(`export { default } from ${lit(fileUrl(c.canaryJs))};`))};\nprintln(canary);`,
  },
  {
    name: "import(file://)",
    rules: ["dynamic-import"],
    code: (c) => attempt(`  println((await import(${lit(fileUrl(c.canaryJs))})).default);`),
  },
  {
    name: "import(file://) as text",
    rules: ["dynamic-import"],
    code: (c) => attempt(`  println((await import(${lit(fileUrl(c.canaryTxt))}, { with: { type: "text" } })).default);`),
  },
  {
    name: "import(data:) of a module that imports the file",
    rules: ["dynamic-import"],
    code: (c) =>
      attempt(`  const source = ${lit(`export { default } from ${lit(fileUrl(c.canaryJs))};`)};
  println((await import("data:text/javascript," + encodeURIComponent(source))).default);`),
  },
  {
    name: "import(blob:) of a module that imports the file",
    rules: ["dynamic-import", "unknown-global"],
    code: (c) =>
      attempt(`  const source = ${lit(`export { default } from ${lit(fileUrl(c.canaryJs))};`)};
  const url = URL.createObjectURL(new Blob([source], { type: "application/javascript" }));
  println((await import(url)).default);`),
  },
  {
    name: "read /proc/<victim>/environ (the canary is in its environment)",
    rules: ["ambient-authority"],
    code: (c) => attempt(`  println(Deno.readTextFileSync("/proc/${c.victimPid}/environ"));`),
  },
  {
    name: "read /proc/self/environ",
    rules: ["ambient-authority"],
    code: () => attempt(`  println(Deno.readTextFileSync("/proc/self/environ"));`),
  },
  {
    name: "Worker (blob:) that retries every reach",
    rules: ["ambient-authority"],
    code: (c) => inWorker(workerSource(c)),
  },
  {
    name: "Worker asking for its own read permission",
    rules: ["ambient-authority"],
    code: (c) => inWorker(workerSource(c), '{ type: "module", deno: { permissions: { read: true, net: true, run: true, env: true, write: true } } }'),
  },
];

// --- Writing ------------------------------------------------------------------------------

export const FILE_WRITES: Attack[] = [
  {
    name: "Deno.writeTextFileSync",
    rules: ["ambient-authority"],
    code: (c) => attempt(`  Deno.writeTextFileSync(${lit(c.written)}, "pwned");`),
  },
  {
    name: "Deno.symlinkSync (a link to the canary)",
    rules: ["ambient-authority"],
    code: (c) => attempt(`  Deno.symlinkSync(${lit(c.canaryTxt)}, ${lit(c.written)});`),
  },
  {
    name: "node:fs writeFileSync",
    rules: ["dynamic-import"],
    code: (c) => NODE_PRELUDE + attempt(`  const fs = await import("node:fs");
  fs.writeFileSync(${lit(c.written)}, "pwned");`),
  },
  {
    // SQLite opens the files a statement names itself, below Deno's permission checks; an
    // in-memory database needs no permission. Deno allows it no attached database (held on 2.9).
    name: "node:sqlite VACUUM INTO a file (in-memory database, SQLite opening it)",
    rules: ["dynamic-import"],
    code: (c) => NODE_PRELUDE + attempt(`  const { DatabaseSync } = await import("node:sqlite");
  const db = new DatabaseSync(":memory:");
  db.exec("CREATE TABLE t(x); INSERT INTO t VALUES ('pwned')");
  db.exec(${lit(`VACUUM INTO '${c.written}'`)});`),
  },
  {
    name: "node:sqlite ATTACH a new database file",
    rules: ["dynamic-import"],
    code: (c) => NODE_PRELUDE + attempt(`  const { DatabaseSync } = await import("node:sqlite");
  const db = new DatabaseSync(":memory:");
  db.exec(${lit(`ATTACH DATABASE 'file:${c.written}' AS other; CREATE TABLE other.t(x)`)});`),
  },
];

// --- The network (the loopback listener) ------------------------------------------------

export const NETWORK: Attack[] = [
  {
    name: "fetch(http://127.0.0.1)",
    rules: ["ambient-authority"],
    code: (c) => attempt(`  println((await fetch("http://127.0.0.1:${c.port}/")).status);`),
  },
  {
    name: "Deno.connect",
    rules: ["ambient-authority"],
    code: (c) => attempt(`  const conn = await Deno.connect({ hostname: "127.0.0.1", port: ${c.port} });
  conn.close();`),
  },
  {
    name: "Deno.permissions.request, then connect",
    rules: ["ambient-authority"],
    code: (c) =>
      attempt(`  const status = await Deno.permissions.request({ name: "net", host: "127.0.0.1:${c.port}" });
  println("permission:", status.state);
  (await Deno.connect({ hostname: "127.0.0.1", port: ${c.port} })).close();`),
  },
  {
    name: "WebSocket",
    rules: ["ambient-authority"],
    code: (c) =>
      attempt(`  const ws = new WebSocket("ws://127.0.0.1:${c.port}/");
  println(await new Promise((resolve) => { ws.onopen = () => resolve("open"); ws.onerror = () => resolve("error"); ws.onclose = () => resolve("closed"); }));`),
  },
  {
    name: "node:net connect",
    rules: ["dynamic-import"],
    code: (c) =>
      NODE_PRELUDE + attempt(`  const net = await import("node:net");
  const socket = net.connect(${c.port}, "127.0.0.1");
  println(await new Promise((resolve) => { socket.on("connect", () => resolve("connected")); socket.on("error", (e) => resolve("error " + e.name)); }));
  socket.destroy();`),
  },
  {
    name: "node:http get",
    rules: ["dynamic-import"],
    code: (c) =>
      NODE_PRELUDE + attempt(`  const http = await import("node:http");
  println(await new Promise((resolve) => {
    const req = http.get("http://127.0.0.1:${c.port}/", (res) => resolve("status " + res.statusCode));
    req.on("error", (e) => resolve("error " + e.name));
  }));`),
  },
  {
    name: "import(http://127.0.0.1) (remote module)",
    rules: ["dynamic-import"],
    code: (c) => attempt(`  await import("http://127.0.0.1:${c.port}/mod.js");`),
  },
  {
    name: "static import from http://127.0.0.1",
    rules: ["forbidden-import"],
    linkTime: true,
    code: (c) => `import x from "http://127.0.0.1:${c.port}/mod.js";\nprintln(x);`,
  },
  {
    name: "import(https://) (remote module)",
    rules: ["dynamic-import"],
    code: () => attempt(`  await import("https://deno.land/std@0.224.0/fs/mod.ts");`),
  },
  {
    // NPM_CONFIG_REGISTRY points at the listener in the host's environment.
    name: "import(npm:left-pad)",
    rules: ["dynamic-import"],
    code: () => attempt(`  await import("npm:left-pad");`),
  },
  {
    name: "static import from npm:",
    rules: ["forbidden-import"],
    linkTime: true,
    code: () => `import leftPad from "npm:left-pad";\nprintln(leftPad("x", 3));`,
  },
  {
    // JSR_URL points at the listener in the host's environment.
    name: "import(jsr:@std/fs)",
    rules: ["dynamic-import"],
    code: () => attempt(`  await import("jsr:@std/fs");`),
  },
  {
    // Node's internal socket bindings, under node:net: still Deno's ops, and its checks.
    name: "process.binding(\"tcp_wrap\") connect, below node:net",
    rules: ["ambient-authority"],
    code: (c) =>
      NODE_PRELUDE + attempt(`  const { TCP, TCPConnectWrap, constants } = (globalThis as any).process.binding("tcp_wrap");
  const handle = new TCP(constants.SOCKET);
  println(await new Promise((resolve) => {
    const request = new TCPConnectWrap();
    request.oncomplete = (status: number) => resolve("completed " + status);
    const failed = handle.connect(request, "127.0.0.1", ${c.port});
    if (failed) resolve("failed " + failed);
  }));`),
  },
];

// --- Processes ----------------------------------------------------------------------------

export const SPAWN: Attack[] = [
  {
    name: "new Deno.Command(/usr/bin/touch).outputSync()",
    rules: ["ambient-authority"],
    code: (c) => attempt(`  println(new Deno.Command(${lit(c.touch)}, { args: [${lit(c.marker)}] }).outputSync().code);`),
  },
  {
    name: "Deno.Command spawn (async)",
    rules: ["ambient-authority"],
    code: (c) => attempt(`  const child = new Deno.Command("/bin/sh", { args: ["-c", ${lit(`${c.touch} ${c.marker}`)}] }).spawn();
  println((await child.status).code);`),
  },
  {
    name: "Deno.permissions.request, then run",
    rules: ["ambient-authority"],
    code: (c) =>
      attempt(`  const status = await Deno.permissions.request({ name: "run" });
  println("permission:", status.state);
  println(new Deno.Command(${lit(c.touch)}, { args: [${lit(c.marker)}] }).outputSync().code);`),
  },
  {
    name: "node:child_process execSync",
    rules: ["dynamic-import"],
    code: (c) => NODE_PRELUDE + attempt(`  const cp = await import("node:child_process");
  cp.execSync(${lit(`${c.touch} ${c.marker}`)});`),
  },
  {
    name: "node:child_process spawnSync",
    rules: ["dynamic-import"],
    code: (c) => NODE_PRELUDE + attempt(`  const cp = await import("node:child_process");
  println(JSON.stringify(cp.spawnSync(${lit(c.touch)}, [${lit(c.marker)}]).error));`),
  },
  {
    name: "Deno.dlopen(libc).system()",
    rules: ["ambient-authority"],
    code: (c) =>
      attempt(`  const libc = Deno.dlopen("libc.so.6", { system: { parameters: ["buffer"], result: "i32" } });
  libc.symbols.system(new TextEncoder().encode(${lit(`${c.touch} ${c.marker}`)} + "\\0"));`),
  },
  {
    name: "Deno.kill(victim, SIGKILL)",
    rules: ["ambient-authority"],
    code: (c) => attempt(`  Deno.kill(${c.victimPid}, "SIGKILL");`),
  },
  {
    name: "node:process kill(victim)",
    rules: ["dynamic-import"],
    code: (c) => NODE_PRELUDE + attempt(`  const p = await import("node:process");
  p.kill(${c.victimPid}, "SIGKILL");`),
  },
];

// --- The environment ----------------------------------------------------------------------

export const ENV: Attack[] = [
  {
    name: "Deno.env.get",
    rules: ["ambient-authority"],
    code: () => attempt(`  println(Deno.env.get(${lit(ENV_CANARY_NAME)}));`),
  },
  {
    name: "Deno.env.toObject",
    rules: ["ambient-authority"],
    code: () => attempt(`  println(JSON.stringify(Deno.env.toObject()));`),
  },
  {
    name: "Deno.permissions.request, then Deno.env.toObject",
    rules: ["ambient-authority"],
    code: () =>
      attempt(`  const status = await Deno.permissions.request({ name: "env" });
  println("permission:", status.state);
  println(JSON.stringify(Deno.env.toObject()));`),
  },
  {
    name: "node:process env",
    rules: ["dynamic-import"],
    code: () => NODE_PRELUDE + attempt(`  const p = await import("node:process");
  println(p.env[${lit(ENV_CANARY_NAME)}]);
  println(JSON.stringify({ ...p.env }));`),
  },
  {
    name: "process global env",
    rules: ["ambient-authority"],
    code: () => NODE_PRELUDE + attempt(`  println(JSON.stringify(process.env));`),
  },
  {
    name: "node:os userInfo / hostname",
    rules: ["dynamic-import"],
    code: () => NODE_PRELUDE + attempt(`  const os = await import("node:os");
  println(JSON.stringify(os.userInfo()), os.hostname(), os.homedir());`),
  },
];
