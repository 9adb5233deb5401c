// The audit log alone, in a fresh process: opened, given the events of READS file reads as the
// approval gate makes them (each read's request and the policy's decision as events.ts's encoders
// write them, its result as a function that digests the reply when the line is made, ready()
// before each read), signed and closed. Run by bench/audit.ts, once per round; prints one JSON
// object: the process's CPU time (ms; all its threads, V8's compiler and GC helpers included) of
// each phase, and the head's wall time (its fsync and the anchor's rename wait on the disk, which
// CPU time does not show). Not the main thread's alone: Linux's schedstat, which gives it, is
// updated at scheduler ticks, and read a close() of 0.3 ms as 0.
//
// Whole `tacit run`s measure what the log costs a user, but a run's CPU moves by more from one to
// the next than a change to the log makes (interleaved A/Bs of whole runs read +5 ms for a change
// to a path the runs did not take); the log alone moves by about 1 ms in 35.

import { AuditLog } from "../runner/audit/log.js";
import { digestOf } from "../runner/audit/digest.js";
import { actionResultJson, policyDecisionJson, requestedJson } from "../runner/audit/events.js";

/** The process's CPU time so far, in ms. */
function cpuMs(): number {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
}

const [file, readsText] = process.argv.slice(2);
const reads = Number(readsText);
if (file === undefined || !Number.isInteger(reads) || reads < 0) {
  console.error("usage: node dist/bench/audit-log-alone.js <log file> <reads>");
  process.exit(2);
}
const evaluation = "benchBench01";
// What a read of one of the bench's files replies (see bench/audit.ts).
const content = `file 1: ${"abcdefghij".repeat(9)}\n`;

let from = cpuMs();
const phase = (): number => {
  const now = cpuMs();
  const spent = now - from;
  from = now;
  return spent;
};
const log = AuditLog.open(file);
const open = phase();
log.append({ type: "evaluation-started", evaluation, session: null, displayName: "reads.ts", codeDigest: digestOf("code"), policyDigest: digestOf("policy") });
for (let action = 1; action <= reads; action++) {
  log.ready();
  log.append(requestedJson(action, evaluation, "FsRead", `fs.read /tmp/bench/f${action % 10}.txt`, null, "allow"));
  log.append(policyDecisionJson(action, evaluation, null));
  const value = { text: content };
  log.append(() => {
    const reply = JSON.stringify(value);
    return actionResultJson(action, digestOf(reply), 0.021, evaluation, true, Buffer.byteLength(reply), null);
  });
}
log.append({ type: "evaluation-ended", evaluation, outcome: "ok", exitCode: 0, durationMs: 100 });
// The lines of the events still pending are made and written here, not by the head.
log.flush();
const events = phase();
const headStarted = performance.now();
log.signHead();
const headWallMs = performance.now() - headStarted;
const head = phase();
log.close();
const close = phase();
console.log(JSON.stringify({ open, events, head, headWallMs, close }));
