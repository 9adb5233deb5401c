// Node's flags that have Node write what tacit holds to a file, or load code into tacit from the
// project, are refused at tacit's start (bin/tacit.js REFUSED_NODE_FLAGS), through the real CLI:
// --tls-keylog (TLS session keys: with them tacit's HTTPS traffic, the LLM key in it, is read),
// --perf-basic-prof (regular expressions' sources, the start of the secrets tacit looks for among
// them), and a preload, OpenSSL configuration or certificate file named relative to the working
// directory (the project, which scripts write).

import { once } from "node:events";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import type { Server } from "node:https";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, tempDirWithHome } from "../helpers.js";
import { untrustedModelServer } from "../llm/self-signed.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-node-flags-");
const apiKey = `sk-test-${randomUUID()}`;
/** What the https model server received (authorization header and body), one entry per request. */
let received: string[] = [];
let server: Server;
let baseUrl = "";

beforeAll(async () => {
  ({ server, baseUrl, received } = await untrustedModelServer(dir));
  writeFileSync(path.join(dir, "chat.ts"), `println(chat("hello"));\n`);
  writeFileSync(path.join(dir, "s.ts"), `println("ran");\n`);
  writeFileSync(path.join(dir, "preload.cjs"), "// a preload the person wrote; a script could rewrite it\n");
});
afterAll(async () => {
  server.close();
  await once(server, "close");
  cleanup();
});

/** The refusal's opening for `flag` as NODE_OPTIONS spells it. */
const refusalOf = (flag: string): string => `tacit: NODE_OPTIONS (or node's command line) holds ${flag}, which `;

describe.concurrent("Node's flags that leak what tacit holds, or load code from the project", () => {
  it("--tls-keylog: refused before anything runs; no key file is written and the model server is never reached", async () => {
    const keyLog = path.join(dir, "tls-keys.log");
    const args = ["run", "--no-check", "--llm-base-url", baseUrl, "--llm-api-key", apiKey, "--llm-model", "m", "chat.ts"];
    const r = await runCli(args, { cwd: dir, env: { ...env, NODE_EXTRA_CA_CERTS: path.join(dir, "cert.pem"), NODE_OPTIONS: `--tls-keylog=${keyLog}` } });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(refusalOf(`--tls-keylog=${keyLog}`));
    expect(r.stderr).toContain("Nothing was run. Run tacit without it (NODE_OPTIONS= tacit …)");
    expect(r.stderr).not.toContain(apiKey);
    expect(existsSync(keyLog)).toBe(false);
    expect(received).toEqual([]);
  });

  it("--perf-basic-prof (spelled with _ too): refused, the script does not run", async () => {
    for (const flag of ["--perf-basic-prof", "--perf_basic_prof"]) {
      const r = await runCli(["run", "--no-check", "s.ts"], { cwd: dir, env: { ...env, NODE_OPTIONS: flag } });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(refusalOf(flag));
    }
  });

  it("a preload named relative to the working directory (-r ./x, --require=x, --import x, and quoted): refused, the script does not run", async () => {
    // The last as Node reads NODE_OPTIONS: the quotes taken away, --require ./preload.cjs.
    const spellings = [
      ["-r ./preload.cjs", "-r ./preload.cjs"],
      ["--require=./preload.cjs", "--require=./preload.cjs"],
      ["--import ./preload.cjs", "--import ./preload.cjs"],
      ['"--require" "./preload.cjs"', "--require ./preload.cjs"],
    ];
    for (const [flag, shown] of spellings) {
      const r = await runCli(["run", "--no-check", "s.ts"], { cwd: dir, env: { ...env, NODE_OPTIONS: flag! } });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(refusalOf(shown!));
      expect(r.stderr).toContain("name the file by an absolute path outside the project");
    }
  });

  it("a certificate file named relative to the working directory (NODE_EXTRA_CA_CERTS=cert.pem): refused before the model server is reached", async () => {
    const args = ["run", "--no-check", "--llm-base-url", baseUrl, "--llm-api-key", apiKey, "--llm-model", "m", "chat.ts"];
    const r = await runCli(args, { cwd: dir, env: { ...env, NODE_EXTRA_CA_CERTS: "cert.pem" } });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`tacit: NODE_EXTRA_CA_CERTS="cert.pem" names certificates relative to the working directory`);
    expect(r.stderr).toContain("Set it to an absolute path of a file outside the project, or unset it.");
    expect(received).toEqual([]);
  });

  it("OpenSSL's configuration named relative to the working directory (OPENSSL_CONF=./x): refused, the script does not run", async () => {
    writeFileSync(path.join(dir, "openssl.cnf"), "openssl_conf = tacit_test\n[tacit_test]\n");
    const r = await runCli(["run", "--no-check", "s.ts"], { cwd: dir, env: { ...env, OPENSSL_CONF: "./openssl.cnf" } });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`tacit: OPENSSL_CONF="./openssl.cnf" names a file relative to the working directory`);
    const absolute = await runCli(["run", "--no-check", "s.ts"], { cwd: dir, env: { ...env, OPENSSL_CONF: path.join(dir, "openssl.cnf") } });
    expect(absolute.stdout).toBe("ran\n");
  });

  it("what is harmless still runs: an absolute preload, --perf-basic-prof-only-functions, --max-old-space-size", async () => {
    for (const flag of [`--require=${path.join(dir, "preload.cjs")}`, "--perf-basic-prof-only-functions", "--max-old-space-size=300"]) {
      const r = await runCli(["run", "--no-check", "s.ts"], { cwd: dir, env: { ...env, NODE_OPTIONS: flag } });
      expect(r.stderr).toBe("");
      expect(r.stdout).toBe("ran\n");
    }
    expect(readdirSync(dir).filter((name) => name.startsWith("jit-") || name.startsWith("perf-"))).toEqual([]);
  });
});
