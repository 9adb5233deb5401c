// Redaction of an error message against a long classified body (runner/net/redaction.ts): the
// message quotes what a server chose, and the body's words past its first 64 KiB are looked for
// in it anywhere (laterWordsIn: a suffix automaton of the message, the body read once). Timed in
// this process on an 8 MiB and a 32 MiB body, interleaved; the floor is one pass over the same
// body (counting its lines). Linear: the 32 MiB body costs at most about 4 times the 8 MiB one
// (less: part of the cost is fixed), where a quadratic one would cost 16 times (a quadratic
// redaction held the host's thread 11 s). The issue sets no target.

import { HostSecrets } from "../runner/host-secrets.js";
import { redact } from "../runner/net/redaction.js";
import { median } from "./measure.js";
import { line, ms } from "./helpers.js";

const KEY = "canary-5f0e2a9c-1b7d-4c3e-9a8f-0d6b2e4c7a10";

/** An .env-like body of about `bytes` characters (random values), the key last. */
function body(bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  let x = 12345;
  while (size < bytes) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const entry = `SETTING_${size}=v${x.toString(36)}${(x >>> 3).toString(36)}\n`;
    lines.push(entry);
    size += entry.length;
  }
  return `${lines.join("")}API_KEY=${KEY}\n`;
}

/** The floor: one pass over the body, a character at a time. */
function linesIn(text: string): number {
  let lines = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lines++;
  return lines;
}

function timed(run: () => void): number {
  const started = performance.now();
  run();
  return performance.now() - started;
}

export function benchRedaction(runs: number): boolean {
  const samples = Math.max(3, Math.round(runs / 3));
  // What an error names of a server's choice: 16 KiB, the key glued inside it.
  const message = `http://127.0.0.1:1234: answered in a content coding tacit does not decode (${"w".repeat(8000)}xx${KEY}yy${"v".repeat(8000)}); nothing of the answer was kept`;
  const bodies = { "8 MiB": body(8 * 1024 * 1024), "32 MiB": body(32 * 1024 * 1024) };
  const times: Record<string, number[]> = {};
  for (let round = 0; round < samples + 1; round++) {
    for (const [size, text] of round % 2 === 0 ? Object.entries(bodies) : Object.entries(bodies).reverse()) {
      let masked = "";
      const redaction = timed(() => (masked = redact(message, [text])));
      if (masked.includes(KEY)) throw new Error(`redaction bench: the key was not masked in the message (${size} body)`);
      const floor = timed(() => void linesIn(text));
      if (round === 0) continue; // warm-up
      (times[`redact ${size}`] ??= []).push(redaction);
      (times[`floor ${size}`] ??= []).push(floor);
    }
  }
  const m = (label: string): number => median(times[label]!);
  console.log(`\nredaction: a 16 KiB error message against a classified body, the key past its first 64 KiB (${samples} runs each)`);
  for (const size of Object.keys(bodies)) {
    line(`floor: one pass over the ${size} body`, `${ms(m(`floor ${size}`))}   (floor)`);
    line(`redact(message, [${size} body])`, `${ms(m(`redact ${size}`))}   ${(m(`redact ${size}`) / m(`floor ${size}`)).toFixed(2)}x floor`);
  }
  line("32 MiB / 8 MiB: redact (linear: 4 at most)", (m("redact 32 MiB") / m("redact 8 MiB")).toFixed(2));
  line("32 MiB / 8 MiB: floor", `${(m("floor 32 MiB") / m("floor 8 MiB")).toFixed(2)}   (no target)`);
  return true;
}

/** CPU time (user and system, ms) `run` took: less shaken than wall time by the other processes of a loaded machine. */
function cpuTimed(run: () => void): number {
  const started = process.cpuUsage();
  run();
  const { user, system } = process.cpuUsage(started);
  return (user + system) / 1000;
}

/** An HTTP answer's body of about `bytes` characters, of the kind `kind` names: JSON, an HTML page, or prose. */
function answerBody(bytes: number, kind: "json" | "html" | "prose"): string {
  const parts: string[] = [];
  let size = 0;
  let x = 12345;
  while (size < bytes) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const part =
      kind === "json"
        ? `{"id":${x},"name":"v${x.toString(36)}","note":"line\\n ${x % 1000} says \\u00e9t\\u00e9","url":"https:\\/\\/example.com\\/a?b=${x % 97}"},\n`
        : kind === "html"
          ? `<li><a href="/p?q=${x.toString(36)}&amp;r=%2F${x % 97}">item &#39;${x.toString(16)}&#39; &lt;${x % 13}&gt;</a></li>\n`
          : `Ask the desk ${x % 1000} times, says the task list; ${x.toString(36)} is why.\n`;
    parts.push(part);
    size += part.length;
  }
  return parts.join("");
}

/**
 * The operator's LLM key masked in an HTTP answer's body (HostSecrets.inServerText), for 1 MiB
 * bodies that do not hold it: the search that leaves such a body as it is (runner/net/form-presence.ts)
 * against the whole masking every body had before it (three decoding passes and the forms'
 * automaton), and a body with the key escaped in it, which still takes the whole masking. The
 * floor is one indexOf scan of the same body for a text it does not hold. In CPU time, interleaved.
 * No target is set.
 */
export function benchServerText(runs: number): boolean {
  const samples = Math.max(5, runs);
  const key = `sk-proj-${"Ab3dEf9hIjKlMn0pQrStUvWxYz12".repeat(2)}`;
  const secrets = new HostSecrets([key]);
  const bodies = { json: answerBody(1 << 20, "json"), html: answerBody(1 << 20, "html"), prose: answerBody(1 << 20, "prose") };
  const withKey = `${bodies.html}<input value="${key.replace(/-/g, "&#x2D;")}">`;
  const times: Record<string, number[]> = {};
  const add = (label: string, value: number): void => void (times[label] ??= []).push(value);
  for (let round = 0; round < samples + 1; round++) {
    for (const [kind, text] of Object.entries(bodies)) {
      let shown = "";
      const floor = cpuTimed(() => void text.indexOf("no-such-text-in-it"));
      const searched = cpuTimed(() => (shown = secrets.inServerText(text)));
      if (shown !== text) throw new Error(`server-text bench: the ${kind} body was changed, though it holds no form of the key`);
      const whole = cpuTimed(() => void secrets.scrubText(redact(text, [key], [], false)));
      if (round === 0) continue; // warm-up
      add(`floor ${kind}`, floor);
      add(`search ${kind}`, searched);
      add(`whole ${kind}`, whole);
    }
    let masked = "";
    const keyed = cpuTimed(() => (masked = secrets.inServerText(withKey)));
    if (masked.includes("Ab3dEf9h")) throw new Error("server-text bench: the key was not masked in the body that holds it");
    if (round > 0) add("with key", keyed);
  }
  const m = (label: string): number => median(times[label]!);
  console.log(`\nserver-text: the LLM key masked in a 1 MiB answer body (HostSecrets.inServerText), CPU time, medians of ${samples} runs`);
  for (const kind of Object.keys(bodies)) {
    line(`floor: indexOf over the ${kind} body`, `${ms(m(`floor ${kind}`))}   (floor)`);
    line(`inServerText, ${kind} body without the key`, `${ms(m(`search ${kind}`))}   ${(m(`search ${kind}`) / m(`floor ${kind}`)).toFixed(1)}x floor`);
    line(`whole masking of it (before the search)`, `${ms(m(`whole ${kind}`))}   ${(m(`whole ${kind}`) / m(`floor ${kind}`)).toFixed(1)}x floor, ${(m(`whole ${kind}`) / m(`search ${kind}`)).toFixed(1)}x the search`);
  }
  line("inServerText, html body with the key escaped", `${ms(m("with key"))}   (the whole masking)`);
  return true;
}
