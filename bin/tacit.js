#!/usr/bin/env node
// The `tacit` command. The CLI is a CommonJS bundle (dist/bundle), compiled through a V8
// code cache (dist/bundle/code-cache.cjs, from cli/code-cache.ts) so that a short run does not
// spend its time compiling. This file is CommonJS too (bin/package.json says so, while the
// command keeps its name): Node then starts it without setting up its ES module loader,
// about 8 ms of every run.
"use strict";
const path = require("node:path");

// First of all: SIGUSR1 does nothing (cli/stop-signals.ts says why: Node answers it by opening its
// inspector, through which any local process may run code in tacit), set here rather than only once
// the bundle has loaded, where a process sending SIGUSR1 over and over as tacit started opened the
// inspector in the ~100 ms before, and it stayed open for the whole run. From here on none opens;
// one opened before (as Node booted) is refused, before tacit has read anything.
process.on("SIGUSR1", () => undefined);
/** Node's own flags for this process: its command line's, and NODE_OPTIONS' words. */
const nodeFlags = [...process.execArgv, ...nodeOptionsWords(process.env.NODE_OPTIONS ?? "")];

/**
 * NODE_OPTIONS split into words as Node splits it (src/node_options.cc, ParseNodeOptionsEnvVar): at
 * spaces outside double quotes, the quotes taken away, and a backslash in quotes taking the next
 * character as it is. Split at whitespace instead, `"--require" "./x"` hid its flag behind a quote
 * while Node loaded ./x.
 */
function nodeOptionsWords(text) {
  const words = [];
  let quoted = false;
  let startsWord = true;
  for (let i = 0; i < text.length; i++) {
    let c = text[i];
    if (c === "\\" && quoted && i + 1 < text.length) c = text[++i];
    else if (c === " " && !quoted) {
      startsWord = true;
      continue;
    } else if (c === '"') {
      quoted = !quoted;
      continue;
    }
    if (startsWord) words.push(c);
    else words[words.length - 1] += c;
    startsWord = false;
  }
  return words;
}
refuseInspectorOpenedUnasked();

/** Exits (2) if Node's inspector is open though tacit's command line and NODE_OPTIONS did not ask for one. */
function refuseInspectorOpenedUnasked() {
  let open = false;
  try {
    open = require("node:inspector").url() !== undefined;
  } catch {
    // A Node built without the inspector: nothing can open it.
  }
  const asked = nodeFlags.some((arg) => /^--inspect(?:-brk|-wait)?(?:=|$)/.test(arg));
  if (!open || asked) return;
  process.stderr.write(
    "tacit: Node's inspector is open in this process, though neither its command line nor NODE_OPTIONS asked for it (--inspect): " +
      "another process opened it with SIGUSR1 as tacit started, and through it any local process could run code in tacit and read what it " +
      "holds. Nothing was run. Start tacit again, and look for what sends SIGUSR1 to your processes; to debug tacit, start it with node --inspect.\n",
  );
  process.exit(2);
}

/**
 * Node's flags that tacit refuses to start with, each with why, in one place. Those that have Node
 * write what tacit holds (keys, memory, the secrets it looks for) to a file, where a script or a
 * command it runs may read it; and those that load code or settings into tacit from a path named
 * relative to the working directory (the project, which scripts may write; a bare module name is
 * looked for in its node_modules), before tacit's first line. An absolute path is the person's own
 * choice, and taken. Flags judged harmless are not listed; README.md names them, where it says what
 * tacit keeps its memory from (core dumps, reports, heap snapshots).
 */
const REFUSED_NODE_FLAGS = [
  {
    names: ["--heapsnapshot-near-heap-limit"],
    refused: () => true,
    why:
      "has Node write all of tacit's memory, the LLM key and classified plaintext with it, to a file in the working directory (where " +
      "scripts read) when its heap runs low",
    instead: "to study tacit's memory, do so on a run that holds no secret",
  },
  {
    names: ["--tls-keylog"],
    refused: () => true,
    why:
      "has Node write the keys of every TLS session tacit opens to that file: whoever reads it decrypts tacit's HTTPS traffic, the LLM key " +
      "and the secret headers it sends for scripts with it",
    instead: "to study tacit's traffic, do so on a run that holds no secret",
  },
  {
    names: ["--perf-basic-prof", "--perf-prof"],
    refused: () => true,
    why:
      "has V8 write the names of the code it compiles to a file (/tmp/perf-<pid>.map, or jit-<pid>.dump in the working directory), " +
      "the source of each regular expression with them: tacit compiles the start of each secret it looks for in a request into one",
    instead: "to profile tacit, use --perf-basic-prof-only-functions, on a run that holds no secret",
  },
  {
    names: ["-r", "--require", "--import", "--loader", "--experimental-loader", "--experimental-policy", "--openssl-config", "--snapshot-blob", "--env-file"],
    refused: (value) => value === undefined || isFromWorkingDirectory(value),
    why:
      "names a file relative to the working directory (or a module looked for in its node_modules), from which Node loads code or " +
      "settings into tacit before tacit's first line: the working directory is the project, which scripts may write, so the next run " +
      "would load what a script planted there, with the LLM key and the plaintext tacit holds",
    instead: "name the file by an absolute path outside the project",
  },
];

/**
 * Variables of Node's environment that name a file it loads as it starts, judged as those flags
 * are: OpenSSL's configuration (its providers and engines are shared libraries Node loads, before
 * any of tacit's code), and the certificates Node trusts for tacit's HTTPS (one planted there lets
 * whoever answers for the LLM's address read its key). SSL_CERT_DIR may hold several paths, split at ":".
 */
const REFUSED_NODE_ENVIRONMENT = [
  {
    names: ["OPENSSL_CONF"],
    why:
      "names a file relative to the working directory (the project, which scripts may write), whose providers and engines OpenSSL loads " +
      "into tacit as Node starts: the next run would load a library a script planted there, with the LLM key and the plaintext tacit holds",
  },
  {
    // OpenSSL's own two only where Node takes its store (--use-openssl-ca); otherwise Node reads neither.
    names: ["NODE_EXTRA_CA_CERTS", ...(nodeFlags.includes("--use-openssl-ca") ? ["SSL_CERT_FILE", "SSL_CERT_DIR"] : [])],
    why:
      "names certificates relative to the working directory (the project, which scripts may write), which Node trusts for tacit's " +
      "HTTPS: one a script planted there lets whoever answers for the LLM's address read the key and what tacit sends",
  },
];

/** Whether a file named to a flag is found from the working directory: a relative path, or a bare module name. */
function isFromWorkingDirectory(value) {
  if (path.isAbsolute(value)) return false;
  // A URL names its place itself: file:///… is absolute, data: holds the code, node: is Node's own.
  if (/^(?:file:\/\/\/|data:|node:)/.test(value)) return false;
  return true;
}

/**
 * Exits (2) if the command line or NODE_OPTIONS holds a flag of REFUSED_NODE_FLAGS (spelled with - or
 * _, its value after = or as the next word).
 */
function refuseNodeFlagsThatLeakOrLoad() {
  for (let i = 0; i < nodeFlags.length; i++) {
    const word = nodeFlags[i];
    if (!word.startsWith("-")) continue;
    const equals = word.indexOf("=");
    const name = (equals === -1 ? word : word.slice(0, equals)).replace(/_/g, "-");
    const rule = REFUSED_NODE_FLAGS.find((each) => each.names.includes(name));
    if (rule === undefined) continue;
    const value = equals === -1 ? nodeFlags[i + 1] : word.slice(equals + 1);
    if (!rule.refused(value)) continue;
    const shown = equals === -1 && value !== undefined && rule.names.includes("-r") ? `${name} ${value}` : word;
    process.stderr.write(
      `tacit: NODE_OPTIONS (or node's command line) holds ${shown.replace(/[^\x20-\x7e]/g, "?")}, which ${rule.why}. Nothing was run. ` +
        `Run tacit without it (NODE_OPTIONS= tacit …); ${rule.instead}.\n`,
    );
    process.exit(2);
  }
}
refuseNodeFlagsThatLeakOrLoad();
refuseNodeEnvironmentFromWorkingDirectory();

/** Exits (2) if a variable of REFUSED_NODE_ENVIRONMENT names a path relative to the working directory. */
function refuseNodeEnvironmentFromWorkingDirectory() {
  for (const rule of REFUSED_NODE_ENVIRONMENT) {
    for (const name of rule.names) {
      const value = process.env[name] ?? "";
      const relative = value.split(name === "SSL_CERT_DIR" ? ":" : /(?!)/).find((part) => part !== "" && !path.isAbsolute(part));
      if (relative === undefined) continue;
      process.stderr.write(
        `tacit: ${name}=${JSON.stringify(value).replace(/[^\x20-\x7e]/g, "?")} ${rule.why}. Nothing was run. ` +
          "Set it to an absolute path of a file outside the project, or unset it.\n",
      );
      process.exit(2);
    }
  }
}

// First of all, before any secret is read: no core dump of tacit holds its memory. The host
// holds the LLM key, classified plaintext and secret headers, and a core dump (Ctrl-\ on a
// terminal, a crash) wrote all of it where core_pattern says: by default a file `core` in
// tacit's working directory, the project, the allowed root where the next script reads it. The
// sandbox and the pure evaluator run with no core file at all (sandbox-process.ts); Node cannot
// set its own RLIMIT_CORE or PR_SET_DUMPABLE, but a process may write its own
// coredump_filter, and 0 leaves a core only its registers and mappings' names. What tacit
// starts inherits it. Not Linux (no /proc): nothing to do.
try {
  require("node:fs").writeFileSync("/proc/self/coredump_filter", "0");
} catch {
  // No such file: not Linux, or a kernel without core dumps.
}
// Nor a Node diagnostic report, which NODE_OPTIONS (--report-on-signal, --report-on-fatalerror,
// --report-uncaught-exception), held by a shell for another tool, turns on: written to the working
// directory, the project, it holds tacit's command line (an --llm-api-key), environment and stacks.
process.report.reportOnSignal = false;
process.report.reportOnFatalError = false;
process.report.reportOnUncaughtException = false;
// Nor a heap snapshot, which is all of tacit's memory: --heapsnapshot-signal (in NODE_OPTIONS, so
// spelled with - or _) has Node write one into the working directory, the default allowed root,
// on that signal, which any process of the user may send (a command a script runs outside a PID
// namespace); the next read of it by a script had a classified value's plaintext and the LLM key.
// Node listens for it with a listener of its own, taken away here; the signal then does nothing,
// as it did besides the snapshot. --heapsnapshot-near-heap-limit cannot be turned off once Node
// runs (and a script can bring tacit's heap near its limit): tacit does not run with it.
for (const signal of Object.keys(require("node:os").constants.signals)) {
  const writers = process.listeners(signal).filter((listener) => listener.name === "doWriteHeapSnapshot");
  for (const writer of writers) process.removeListener(signal, writer);
  if (writers.length > 0) process.on(signal, () => undefined);
}

const bundleDir = path.resolve(__dirname, "..", "dist", "bundle");
const { installCodeCache, saveCodeCache } = require(path.join(bundleDir, "code-cache.cjs"));
installCodeCache(bundleDir);
const prestart = require(path.join(bundleDir, "prestart.cjs"));
// Before anything is started: nothing tacit was handed beyond stdio may reach what it starts.
prestart.closeInheritedDescriptors();
// `tacit run` starts its sandbox before the rest of tacit loads.
const prestarted = prestart.prestartFromArgv(process.argv);
const { main, exitCodeAfterOutput } = require(path.join(bundleDir, "tacit.cjs"));

// A failure of main itself is an unhandled rejection: Node prints it and exits with 1.
void main(process.argv, prestarted).then((code) => {
  saveCodeCache();
  // Exit explicitly (a producer still writing to our stdin must not keep tacit alive), but
  // only once everything written to stdout and stderr has been handed to the OS: a pipe to a
  // slow reader may still hold output.
  let pending = 2;
  const done = () => {
    if (--pending === 0) process.exit(exitCodeAfterOutput(code));
  };
  process.stdout.write("", done);
  process.stderr.write("", done);
});
