// chat() against a fake OpenAI-compatible server on loopback (the only fake: a cloud model
// cannot run here). Through the real CLI: plain and classified chat, the key kept in the
// host, and the incomplete-config warning.

import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshTacitHome, runCli, unchecked } from "../helpers.js";

interface Received {
  authorization: string | undefined;
  model: string;
  content: string;
}

let server: Server;
let baseUrl: string;
const received: Received[] = [];
let dir: string;
const apiKey = `sk-test-${randomUUID()}`;
const canary = `CANARY-${randomUUID()}`;

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      const parsed = JSON.parse(body) as { model: string; messages: Array<{ content: string }> };
      const content = parsed.messages[0]!.content;
      received.push({ authorization: request.headers.authorization, model: parsed.model, content });
      if (parsed.model === "huge") {
        // An answer larger than tacit reads of one: 70 MB of JSON, sent in pieces.
        response.setHeader("content-type", "application/json");
        const piece = "x".repeat(1024 * 1024);
        response.write('{"choices":[{"message":{"content":"');
        let sent = 0;
        const more = (): void => {
          while (sent < 70) {
            sent++;
            if (!response.write(piece)) return void response.once("drain", more);
          }
          response.end('"}}]}');
        };
        more();
        return;
      }
      if (parsed.model === "cut-off") {
        // The answer's head and its first bytes, then the connection is dropped (a model proxy
        // restarted, a network that failed partway).
        response.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
        response.write('{"choices":[{"message":{"content":"par');
        setTimeout(() => response.socket?.destroy(), 50);
        return;
      }
      if (parsed.model === "deep") {
        // An answer whose content is there, beside a million nested arrays (2 MB).
        response.setHeader("content-type", "application/json");
        response.end(`{"choices":[{"message":{"content":"shallow"}}],"x":${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}}`);
        return;
      }
      if (parsed.model === "echo-thrice") {
        // A model that says the question back three times, then the key (the fixture's echo, longer).
        response.setHeader("content-type", "application/json");
        response.end(JSON.stringify({ choices: [{ message: { content: `${content}${content}${content} (${request.headers.authorization})` } }] }));
        return;
      }
      if (parsed.model === "error-echo") {
        // A refusal that quotes the request, key included (some proxies do), after the question.
        response.statusCode = 400;
        response.end(`bad request: ${content} (credential ${request.headers.authorization})`);
        return;
      }
      response.setHeader("content-type", "application/json");
      // The answer repeats the question and the key: neither may reach the agent.
      response.end(JSON.stringify({ choices: [{ message: { role: "assistant", content: `answer to: ${content} (${request.headers.authorization})` } }] }));
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  dir = mkdtempSync(path.join(tmpdir(), "tacit-chat-"));
  writeFileSync(path.join(dir, ".env"), `${canary}\n`);
});

afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

function llmFlags(): string[] {
  return ["--llm-base-url", baseUrl, "--llm-api-key", apiKey, "--llm-model", "test-model"];
}

/** Where the split test's key starts: the piece boundary of forEachLine (runner/fs/file-system.ts CHUNK_BYTES, 1 MiB) falls inside it. */
const SPLIT_FILLER_BYTES = 1024 * 1024 - 7 - "key: ".length;

/**
 * The scripts that read a file holding the key by every route, each printing after a line of
 * its own (see partOf), run as one: a run each was a tacit start. Each writes files of its own;
 * cat, permitted for the two that use it, reads only what it is given.
 */
const KEY_FILE_PARTS: Record<"routes" | "base64" | "utf16" | "split", string> = {
  routes: [
    'requestFileSystem(".", (fs) => {',
    '  const file = fs.access("leaked-key.txt");',
    "  println(file.read());",
    "  println(new TextDecoder().decode(file.readBytes()));",
    "  file.forEachLine((line) => println(line));",
    '  println(JSON.stringify(fs.grep("leaked-key.txt", "key")));',
    "});",
    'requestExecPermission(["cat"], (proc) => println(proc.execOutput("cat", ["leaked-key.txt"])));',
  ].join("\n"),
  base64: [
    'requestFileSystem(".", (fs) => {',
    '  const file = fs.access("secret.yaml");',
    "  const decode = (text: string) => [...text.matchAll(/[A-Za-z0-9+/_=-]{16,}/g)].map((m) => { try { return atob(m[0].replace(/-/g, \"+\").replace(/_/g, \"/\")); } catch { return m[0]; } });",
    "  println(file.read(), decode(file.read()).join(\"\\n\"));",
    "  println(decode(new TextDecoder().decode(file.readBytes())).join(\"\\n\"));",
    "  file.forEachLine((line) => println(line, decode(line).join(\" \")));",
    '  println(JSON.stringify(fs.grep("secret.yaml", ".")));',
    "});",
  ].join("\n"),
  utf16: [
    'requestFileSystem(".", (fs) => {',
    '  for (const [name, encoding] of [["key-utf16le.txt", "utf-16le"], ["key-utf16be.txt", "utf-16be"]]) {',
    "    const file = fs.access(name);",
    "    println(file.read());",
    "    println(new TextDecoder(encoding).decode(file.readBytes()));",
    "    println(btoa(String.fromCharCode(...file.readBytes())));",
    "    file.forEachLine((line) => println(line));",
    '    println(JSON.stringify(fs.grep(name, ".")));',
    "  }",
    "});",
    'requestExecPermission(["cat"], (proc) => println(proc.execOutput("cat", ["key-utf16le.txt", "key-utf16be.txt"])));',
  ].join("\n"),
  split: 'requestFileSystem(".", (fs) => fs.access("split-key.txt").forEachLine((line) => { if (!line.startsWith("f")) println(line); }));',
};

/** The line a part of keyFilesRun's script prints before its own output. */
const partLine = (name: string): string => `@@part ${name}`;

/** What the part `name` of keyFilesRun's script printed: from its line to the next part's. */
function partOf(stdout: string, name: keyof typeof KEY_FILE_PARTS): string {
  const from = stdout.indexOf(`${partLine(name)}\n`);
  expect(from, `no output of the part ${name}`).toBeGreaterThanOrEqual(0);
  const start = from + partLine(name).length + 1;
  const next = stdout.indexOf("@@part ", start);
  return stdout.slice(start, next === -1 ? undefined : next);
}

let keyFiles: ReturnType<typeof runCli> | undefined;

/** The run of KEY_FILE_PARTS, with their files written first; started by the first test that asks. */
function keyFilesRun(): ReturnType<typeof runCli> {
  keyFiles ??= (() => {
    writeFileSync(path.join(dir, "leaked-key.txt"), `key: ${apiKey}\n`);
    const b64 = (text: string): string => Buffer.from(text).toString("base64");
    writeFileSync(
      path.join(dir, "secret.yaml"),
      `kind: Secret\ndata:\n  OPENAI_API_KEY: ${b64(apiKey)}\n  WITH_NEWLINE: ${b64(`${apiKey}\n`)}\n` +
        `auths: {"auth": "${b64(`me:${apiKey}`)}", "other": "${b64(`x:${apiKey}`)}"}\nurl: ${Buffer.from(`${apiKey}?`).toString("base64url")}\n`,
    );
    const line = `OPENAI_API_KEY=${apiKey}\r\n`;
    writeFileSync(path.join(dir, "key-utf16le.txt"), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(line, "utf16le")]));
    writeFileSync(path.join(dir, "key-utf16be.txt"), Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(line, "utf16le").swap16()]));
    writeFileSync(path.join(dir, "split-key.txt"), "f\n".repeat(SPLIT_FILLER_BYTES / 2) + `key: ${apiKey}\nend\n`);
    const script = path.join(dir, "key-files.ts");
    writeFileSync(script, Object.entries(KEY_FILE_PARTS).map(([name, text]) => `println(${JSON.stringify(partLine(name))});\n${text}\n`).join(""));
    return runCli(unchecked(["run", ...llmFlags(), "--command-permissions", "cat", script]), { cwd: dir });
  })();
  return keyFiles;
}

describe("chat", () => {
  it("plain chat returns the model's answer; the key goes to the model, never to the agent", async () => {
    received.length = 0;
    const script = path.join(dir, "plain.ts");
    writeFileSync(script, 'const a: string = chat("what is 2+2?");\nprintln(a.startsWith("answer to: what is 2+2?"));\n');
    const r = await runCli(unchecked(["run", ...llmFlags(), script]), { cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    // The fake model echoes the Authorization header; plain answers are the model's words.
    expect(r.stdout.split("\n")[0]).toBe("true");
    expect(received).toEqual([{ authorization: `Bearer ${apiKey}`, model: "test-model", content: "what is 2+2?" }]);
  });

  it("takes the key from TACIT_LLM_API_KEY (the environment, out of every script's reach) when no flag or config gives one", async () => {
    received.length = 0;
    const script = path.join(dir, "env-key.ts");
    writeFileSync(script, 'println(chat("ping").length > 0);\n');
    const r = await runCli(unchecked(["run", "--llm-base-url", baseUrl, "--llm-model", "test-model", script]), { cwd: dir, env: { TACIT_LLM_API_KEY: apiKey } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("true\n");
    expect(received).toEqual([{ authorization: `Bearer ${apiKey}`, model: "test-model", content: "ping" }]);
  });

  it("the key never comes back to a script by another route: a file holding it, read as text, bytes or lines, grepped, or printed by a command", async () => {
    const r = await keyFilesRun();
    expect(r.code, r.stderr).toBe(0);
    const stdout = partOf(r.stdout, "routes");
    expect(stdout + r.stderr).not.toContain(apiKey);
    // Whole replies say [redacted]; forEachLine's pieces keep their length, so the key is starred.
    expect(stdout.match(/key: \[redacted\]/g)).toHaveLength(4);
    expect(stdout).toContain(`key: ${"*".repeat(apiKey.length)}`);
  });

  it("the key in base64 in a file (a Kubernetes Secret, a Docker auth, base64url) is masked too, at every alignment", async () => {
    // A Secret manifest keeps each value in base64, and Docker's config.json keeps "user:token";
    // read as text, a script decoded them and had the key.
    const r = await keyFilesRun();
    expect(r.code, r.stderr).toBe(0);
    const stdout = partOf(r.stdout, "base64");
    expect(stdout).toContain("kind: Secret");
    const random = apiKey.slice("sk-test-".length);
    for (let at = 0; at + 8 <= random.length; at++) {
      expect(stdout, `holds ${random.slice(at, at + 8)} of the key`).not.toContain(random.slice(at, at + 8));
    }
  });

  it("the key in a UTF-16 text file (Windows PowerShell's `>` writes UTF-16LE) is masked too, read by every route", async () => {
    // Read as UTF-8, each ASCII character of the key comes with a NUL beside it: the key as it
    // is, and its base64 forms, were never found there, and a script dropped the NULs (or
    // decoded readBytes() as UTF-16) and had the key.
    const r = await keyFilesRun();
    expect(r.code, r.stderr).toBe(0);
    const stdout = partOf(r.stdout, "utf16");
    // With the NULs dropped (raw, and JSON's \u0000 in grep's answer), as a script would: each
    // file was read by all five routes, read(), readBytes() decoded, forEachLine, grep and cat.
    const seen = (stdout + r.stderr).replace(/\u0000|\\u0000/g, "");
    expect(seen.split("OPENAI_API_KEY=").length - 1, seen).toBe(10);
    const base64Decoded = [...stdout.matchAll(/[A-Za-z0-9+/=]{40,}/g)].map((m) => Buffer.from(m[0], "base64").toString("latin1").replace(/\u0000/g, "")).join("\n");
    const random = apiKey.slice("sk-test-".length);
    for (let at = 0; at + 8 <= random.length; at++) {
      const piece = random.slice(at, at + 8);
      expect(seen, `holds ${piece} of the key`).not.toContain(piece);
      expect(base64Decoded, `its base64 holds ${piece} of the key`).not.toContain(piece);
    }
  });

  it("a key split across two pieces of forEachLine is masked in both", async () => {
    expect(SPLIT_FILLER_BYTES % 2).toBe(0);
    const r = await keyFilesRun();
    expect(r.code, r.stderr).toBe(0);
    const stdout = partOf(r.stdout, "split");
    expect(stdout).not.toContain(apiKey);
    expect(stdout).toBe(`key: ${"*".repeat(apiKey.length)}\nend\n`);
  });

  it("a command's output cut at its limit inside the key leaves no piece of it: the bytes past the cut are looked at first", async () => {
    // `cat pad.txt leaked-key.txt`, the pad written so that the cut falls n characters into the
    // key: each length of pad showed n more of it, and the last character was one guess in a few
    // dozen away (a whole key read back is masked, a wrong one not). The cut as config sets it
    // (libraryConfig.execOutputLimitBytes), 64 KiB rather than the default 8 MiB: where it falls is
    // the point, not its size, and four commands' 8 MiB each were most of this test's CPU.
    const limit = 64 * 1024;
    const config = path.join(dir, "exec-cut-config.json");
    writeFileSync(config, JSON.stringify({ libraryConfig: { execOutputLimitBytes: limit } }));
    writeFileSync(path.join(dir, "cut-key.txt"), `key: ${apiKey}\n`);
    const cuts = [1, 9, 20, apiKey.length - 1];
    for (const n of cuts) writeFileSync(path.join(dir, `pad-${n}.txt`), "f".repeat(limit - "key: ".length - n));
    const script = path.join(dir, "exec-cut.ts");
    writeFileSync(
      script,
      `requestExecPermission(["cat"], (proc) => {\n  for (const n of ${JSON.stringify(cuts)}) {\n` +
        `    const out = proc.execOutput("cat", [\`pad-\${n}.txt\`, "cut-key.txt"]);\n` +
        `    println(JSON.stringify(out.slice(${limit} - "key: ".length - n - 3)));\n  }\n});\n`,
    );
    const r = await runCli(unchecked(["run", "--config", config, ...llmFlags(), "--command-permissions", "cat", script]), { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const random = apiKey.slice("sk-test-".length);
    for (let at = 0; at + 4 <= random.length; at++) {
      expect(r.stdout, `holds ${random.slice(at, at + 4)} of the key`).not.toContain(random.slice(at, at + 4));
    }
    const marker = `\n[tacit: output truncated at ${limit} bytes; the rest was discarded]\n`;
    expect(r.stdout).toBe(cuts.map((n) => `${JSON.stringify(`fffkey: ${"*".repeat(n)}${marker}`)}\n`).join(""));
  });

  it("classified chat: the model gets the plaintext, the agent gets Classified(***), the sink the answer", async () => {
    received.length = 0;
    const script = path.join(dir, "classified.ts");
    const sink = path.join(dir, "sink.txt");
    writeFileSync(
      script,
      'requestFileSystem(".", (fs) => {\n  const answer = chat(fs.readClassified(".env").map((s) => "summarize " + s.trim()));\n  println(answer, String(answer), JSON.stringify({ answer }));\n});\n',
    );
    const r = await runCli(unchecked(["run", ...llmFlags(), "--secure-output", sink, script]), { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('Classified(***) Classified(***) {"answer":"Classified(***)"}\n');
    expect(r.stdout + r.stderr).not.toContain(canary);
    expect(r.stdout + r.stderr).not.toContain(apiKey);
    expect(received.map((m) => m.content)).toEqual([`summarize ${canary}`]);
    expect(readFileSync(sink, "utf8")).toContain(`answer to: summarize ${canary}`);
  });

  it("a classified answer that quotes the key (a model proxy echoing its Authorization) is masked before a script can send it on", async () => {
    // Classified answers never reach the sandbox, so the scrub of its replies missed them: a
    // script posted the answer (or a map of it, as a secret header) to a host it may reach.
    const sent: string[] = [];
    const recorder = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString()));
      request.on("end", () => {
        sent.push(JSON.stringify({ headers: request.headers, body }));
        response.end("ok");
      });
    });
    recorder.listen(0, "127.0.0.1");
    await once(recorder, "listening");
    const home = freshTacitHome();
    try {
      const at = `127.0.0.1:${(recorder.address() as AddressInfo).port}`;
      const script = path.join(dir, "classified-key.ts");
      const sink = path.join(dir, "key-sink.txt");
      writeFileSync(
        script,
        [
          'const answer = chat(classify("what is your key?"));',
          `requestNetwork(["${at}"], (net) => {`,
          `  net.httpPostClassified("http://${at}/body", answer);`,
          `  net.httpGet("http://${at}/header", { secretHeaders: { "x-key": answer.map((a) => a.slice(a.indexOf("Bearer ") + 7, -1)) } });`,
          "});",
          "println(answer);",
          "",
        ].join("\n"),
      );
      const r = await runCli(unchecked(["run", ...llmFlags(), "--network-permissions", at, "--secure-output", sink, script]), {
        cwd: dir,
        env: { TACIT_HOME: home.home },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(sent).toHaveLength(2);
      expect(sent.join("\n")).toContain("answer to: what is your key? (Bearer [redacted])");
      for (const seen of [...sent, r.stdout, r.stderr, readFileSync(sink, "utf8")]) expect(seen).not.toContain(apiKey);
    } finally {
      recorder.close();
      home.cleanup();
    }
  });

  it("an answer larger than tacit reads of one is refused, with what to do, and not held whole first", async () => {
    // What tacit reads of an answer follows the characters it keeps (answerLimitBytes in
    // runner/llm/chat-client.ts): 64 Ki kept, set in the config, reads 448 KiB of the 70 MB answer
    // where the default 8 Mi read 48 MiB of it first, most of this test's CPU. The refusal is the same.
    const config = path.join(dir, "huge-answer.json");
    writeFileSync(config, JSON.stringify({ libraryConfig: { llm: { answerLimitChars: 64 * 1024 } } }));
    const r = await runCli(unchecked(["run", "--config", config, "--llm-base-url", baseUrl, "--llm-api-key", apiKey, "--llm-model", "huge", "-"]), {
      cwd: dir,
      input: `try { chat("tell me everything"); } catch (e) { println((e as Error).message); }\nprintln("after");\n`,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("chat: the model's answer is larger than the");
    expect(r.stdout).toContain("ask for a shorter answer");
    expect(r.stdout).toContain("after");
    expect(r.stdout).not.toContain(apiKey);
  });

  it("an answer cut off partway is an Error the script can catch, not the end of the evaluation", async () => {
    const r = await runCli(unchecked(["run", "--llm-base-url", baseUrl, "--llm-api-key", apiKey, "--llm-model", "cut-off", "-"]), {
      cwd: dir,
      input: `try { chat("hi"); } catch (e) { println((e as Error).name, (e as Error).message); }\nprintln("after");\n`,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Error chat: the model's answer stopped partway");
    expect(r.stdout).toContain("after");
    expect(r.stdout + r.stderr).not.toContain(apiKey);
  });

  it("an answer nested deeper than any model's is refused before it is parsed", async () => {
    // JSON.parse of nesting costs the host's main thread far more than its size: 40 MB of it
    // (within what tacit reads of an answer) held tacit 21 s at 2 GB, every session of a
    // tacit serve waiting, and the script's time limit cannot fire meanwhile.
    const r = await runCli(unchecked(["run", "--llm-base-url", baseUrl, "--llm-api-key", apiKey, "--llm-model", "deep", "-"]), {
      cwd: dir,
      input: `try { println(chat("hi")); } catch (e) { println((e as Error).name, (e as Error).message); }\nprintln("after");\n`,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Error chat: the model's answer is nested deeper than");
    expect(r.stdout).toContain("after");
  });

  it("an answer cut at the characters tacit keeps is cut after the key is masked: no length of question leaves a piece of it", async () => {
    // The characters kept of an answer: 64 Ki, set in the config (libraryConfig.llm.answerLimitChars),
    // the cut the same as at the default 8 Mi (DEFAULT_ANSWER_LIMIT_CHARS), whose answers of 8 MiB,
    // four of them, were most of this test's CPU. The question's length moves the key across the cut.
    const keep = 64 * 1024;
    const config = path.join(dir, "answer-cut.json");
    writeFileSync(config, JSON.stringify({ libraryConfig: { llm: { answerLimitChars: keep } } }));
    const script = path.join(dir, "answer-cut.ts");
    writeFileSync(
      script,
      `for (const n of [12, 20, 30, 40]) {\n  const q = "q".repeat(Math.floor((${keep} - "(Bearer ".length - n) / 3));\n` +
        `  const a = chat(q);\n  println(a.length, JSON.stringify(a.slice(3 * q.length)));\n}\n`,
    );
    const r = await runCli(unchecked(["run", "--config", config, "--llm-base-url", baseUrl, "--llm-api-key", apiKey, "--llm-model", "echo-thrice", script]), { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split("\n").filter(Boolean)).toHaveLength(4);
    const random = apiKey.slice("sk-test-".length);
    for (let at = 0; at + 4 <= random.length; at++) {
      expect(r.stdout, `holds ${random.slice(at, at + 4)} of the key`).not.toContain(random.slice(at, at + 4));
    }
  });

  it("without a model, chat is a clear error; an incomplete config is a warning that never shows the key", async () => {
    const script = path.join(dir, "none.ts");
    writeFileSync(script, 'println(chat("hi"));\n');
    const none = await runCli(unchecked(["run", script]), { cwd: dir });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("no model is configured");
    expect(none.stderr).toContain("--llm-base-url");
    const partial = await runCli(unchecked(["run", "--llm-api-key", apiKey, script]), { cwd: dir });
    expect(partial.stderr).toContain("warning: llm config is incomplete (missing baseUrl, model)");
    expect(partial.stdout + partial.stderr).not.toContain(apiKey);
    expect(partial.code).toBe(1);
  });

  // A thirteenth security review: V8's JSON error quoted the config file's text around the error
  // (a key typed without quotes: ..."{"apiKey":sk-…"... is not valid JSON), and a base URL that
  // carried a key (https://user:KEY@host, ?key=KEY) was accepted, then named whole in chat()'s
  // error to the script. Every error about the llm section now says what to fix, never the value.
  it("no error about the llm config quotes the key, and each says what to fix", async () => {
    const script = path.join(dir, "config-errors.ts");
    writeFileSync(script, 'try { println(chat("hi")); } catch (e) { println((e as Error).message); }\n');
    const file = (name: string, text: string): string => {
      writeFileSync(path.join(dir, name), text);
      return path.join(dir, name);
    };
    const cases: Array<[string, string[], RegExp]> = [
      ["key without quotes", ["--config", file("bare.json", `{"libraryConfig":{"llm":{"baseUrl":"${baseUrl}","apiKey":${apiKey},"model":"m"}}}`)], /not valid JSON at line 1, column \d+ .*fix the JSON there/],
      ["key after a stray comma", ["--config", file("comma.json", `{"libraryConfig":{"llm":{"apiKey":"${apiKey}",}}}`)], /not valid JSON at line 1, column \d+/],
      ["key as the base URL (file)", ["--config", file("as-url.json", JSON.stringify({ libraryConfig: { llm: { baseUrl: apiKey, apiKey: "k", model: "m" } } }))], /llm\.baseUrl: give an http\(s\) URL like https:\/\/api\.example\.com\/v1/],
      ["key as the base URL (flag)", ["--llm-base-url", apiKey, "--llm-api-key", "k", "--llm-model", "m"], /llm\.baseUrl: give an http\(s\) URL/],
      ["key in the URL's password", ["--llm-base-url", baseUrl.replace("//", `//user:${apiKey}@`), "--llm-api-key", "k", "--llm-model", "m"], /no user name, password, query or fragment/],
      ["key in the URL's query", ["--llm-base-url", `${baseUrl}?key=${apiKey}`, "--llm-api-key", "k", "--llm-model", "m"], /no user name, password, query or fragment/],
      ["key as a key's name", ["--config", file("as-name.json", JSON.stringify({ libraryConfig: { llm: { [apiKey]: true } } }))], /unknown key "libraryConfig\.llm\.\(a key not shown.*known keys in libraryConfig\.llm: baseUrl, apiKey, model/],
      ["key not a string", ["--config", file("number.json", `{"libraryConfig":{"llm":{"apiKey":[${JSON.stringify(apiKey)}]}}}`)], /llm\.apiKey: give the key as a non-empty string/],
      ["key from the environment alone", [], /llm config is incomplete \(missing baseUrl, model\).*set --llm-base-url and --llm-model/],
    ];
    // Each case its own run, all at once: none writes anything another reads.
    const runs = await Promise.all(
      cases.map(([label, args]) => runCli(unchecked(["run", ...args, script]), { cwd: dir, env: { TACIT_LLM_API_KEY: label === "key from the environment alone" ? apiKey : "" } })),
    );
    for (const [at, [label, , fix]] of cases.entries()) {
      const r = runs[at]!;
      expect(r.stdout + r.stderr, label).not.toContain(apiKey);
      expect(r.stdout + r.stderr, label).not.toContain(apiKey.slice(0, 10)); // "sk-test-" and two more: V8 quoted about ten characters
      expect(r.stderr, label).toMatch(fix);
    }
  });

  it("the key never reaches the sandbox's environment or the agent's errors", async () => {
    const script = path.join(dir, "unreachable.ts");
    writeFileSync(script, 'try { chat("hi"); } catch (e) { println((e as Error).message); }\n');
    const r = await runCli(unchecked(["run", "--llm-base-url", "http://127.0.0.1:1/v1", "--llm-api-key", apiKey, "--llm-model", "m", script]), { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("could not be reached");
    expect(r.stdout + r.stderr).not.toContain(apiKey);
  });

  it("an error answer quoting a classified question reaches the secure output alone: the script's errors and values hold none of it", async () => {
    const script = path.join(dir, "classified-error-echo.ts");
    const sink = path.join(dir, "classified-error-echo.sink");
    writeFileSync(
      script,
      [
        'requestFileSystem(".", (fs) => {',
        '  const answer = chat(fs.readClassified(".env"));',
        "  const length = answer.map((text) => text.length);",
        "  println(answer, length, JSON.stringify(answer), String(length));",
        '  try { println(chat("after")); } catch (e) { println((e as Error).message); }',
        "});",
      ].join("\n") + "\n",
    );
    const r = await runCli(unchecked(["run", "--llm-base-url", baseUrl, "--llm-api-key", apiKey, "--llm-model", "error-echo", "--secure-output", sink, script]), { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('Classified(***) Classified(***) "Classified(***)" Classified(***)\nchat: the model answered HTTP 400: bad request: after (credential Bearer [redacted])\n');
    expect(r.stderr).not.toContain(canary);
    expect(readFileSync(sink, "utf8")).toContain(`[tacit] chat failed: chat: the model answered HTTP 400: bad request: ${canary}`);
  });

  it("an error answer quoting the key is cut after the key is masked: no length of question leaves a piece of it", async () => {
    const script = path.join(dir, "error-cut.ts");
    // The answer is cut at 500 characters; the question's length moves the key across the cut.
    writeFileSync(script, 'for (let k = 380; k < 480; k += 3) {\n  try { chat("x".repeat(k)); } catch (e) { println((e as Error).message); }\n}\n');
    const r = await runCli(unchecked(["run", "--llm-base-url", baseUrl, "--llm-api-key", apiKey, "--llm-model", "error-echo", script]), { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("chat: the model answered HTTP 400: bad request: xxx");
    const random = apiKey.slice("sk-test-".length);
    for (let at = 0; at + 8 <= random.length; at++) {
      expect(r.stdout + r.stderr, `holds ${random.slice(at, at + 8)} of the key`).not.toContain(random.slice(at, at + 8));
    }
  });
});
