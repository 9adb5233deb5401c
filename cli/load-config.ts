// The configuration of a command: the --config file and the flags, validated (zod) and
// resolved. `tacit run` calls it before it starts anything (see cli/main.ts), so that a config
// that fails refuses at once; the other commands as they begin.

import type { Command } from "commander";
import { ConfigError, type ConfigFile, environmentKey, loadConfigFile, parseFlagConfig, resolveConfig, type RunnerConfig } from "../runner/config.js";
import { blankInProcessInfo } from "../runner/hidden-key.js";
import { declineNetworkNamespace, sandboxNetworkFinding } from "../runner/network-namespace.js";
import { rememberRunFiles } from "../runner/remembered-files.js";
import { withStopSignalsAtDefault } from "./stop-signals.js";
import type { CommonFlags } from "./usage.js";

export function loadConfig(flags: CommonFlags, command: Command): RunnerConfig {
  // A FIFO there waits for a writer: a stop signal ends tacit meanwhile (see withStopSignalsAtDefault).
  const file: ConfigFile = flags.config ? withStopSignalsAtDefault(() => loadConfigFile(flags.config!)) : {};
  // `--no-check` only counts when given; otherwise the file's typeCheck applies.
  const checkGiven = command.getOptionValueSource("check") === "cli";
  const fromFlags = parseFlagConfig({
    executionTimeoutMs: flags.execTimeoutMs,
    memoryLimitMb: flags.memoryLimitMb,
    typeCheck: checkGiven ? flags.check : undefined,
    quiet: flags.quiet,
    recordPath: flags.record,
    auditLog: flags.auditLog,
    requireNetworkNamespace: flags.requireNetworkNamespace,
    // `--no-network-namespace` only counts when given (commander defaults it to true); otherwise the file's networkNamespace applies.
    networkNamespace: command.getOptionValueSource("networkNamespace") === "cli" ? flags.networkNamespace : undefined,
    sessionEnabled: command.getOptionValueSource("session") === "cli" ? flags.session : undefined,
    sessionsMemoryLimitMb: flags.sessionsMemoryLimitMb,
    evaluatorsMemoryLimitMb: flags.evaluatorsMemoryLimitMb,
    libraryConfig:
      flags.allowedRoots ||
      flags.classifiedPaths ||
      flags.secureOutput ||
      flags.commandPermissions ||
      flags.strict ||
      flags.confineCommands ||
      flags.networkPermissions ||
      flags.llmBaseUrl ||
      flags.llmApiKey ||
      flags.llmModel
        ? {
            allowedRoots: flags.allowedRoots,
            classifiedPaths: flags.classifiedPaths,
            secureOutput: flags.secureOutput,
            commandPermissions: flags.commandPermissions,
            strictMode: flags.strict,
            confineCommands: flags.confineCommands,
            networkPermissions: flags.networkPermissions,
            llm:
              flags.llmBaseUrl || flags.llmApiKey || flags.llmModel
                ? { baseUrl: flags.llmBaseUrl, apiKey: flags.llmApiKey, model: flags.llmModel }
                : undefined,
          }
        : undefined,
  });
  const config = { ...resolveConfig(file, fromFlags, process.cwd(), process.env, flags.config ?? null), assumeYes: flags.yes === true };
  // The key is read: other processes of the user need not find it in /proc any more (nor one
  // given in the environment that a flag or the config file overrode).
  const notHidden = blankInProcessInfo([config.library.llm?.apiKey, environmentKey()]);
  // Later runs refuse their scripts this run's config, sink and record too, flags or not.
  const notRemembered = rememberRunFiles(config);
  const warnings = [
    ...config.warnings,
    ...(notHidden === null ? [] : [`the LLM API key could not be blanked in /proc/${process.pid}/environ and cmdline (${notHidden}): a permitted command that reads /proc could read it there`]),
    ...(notRemembered === null ? [] : [notRemembered]),
  ];
  if (!config.quiet) for (const warning of warnings) process.stderr.write(`tacit: warning: ${warning}\n`);
  return config;
}

/**
 * Once, before anything is started: where the sandbox cannot have a network namespace of its own
 * (runner/network-namespace.ts), a warning (unless quiet, or the user declined the namespace with
 * --no-network-namespace), or with --require-network-namespace a refusal, before any script is
 * sent to a sandbox. Every sandbox, pure evaluator and type checker of the process is started as
 * decided here, so a pass here holds for all of them. `checker`: for `tacit check`, whose type
 * checker alone runs (see sandboxNetworkFinding).
 */
export function checkSandboxNetwork(config: RunnerConfig, checker = false): void {
  if (!config.networkNamespace) declineNetworkNamespace();
  const finding = sandboxNetworkFinding(config.requireNetworkNamespace, checker);
  if (finding === null) return;
  if ("refusal" in finding) throw new ConfigError(finding.refusal);
  if (!config.quiet) process.stderr.write(`tacit: warning: ${finding.warning}\n`);
}
