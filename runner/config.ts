// The policy and limits tacit runs under: a JSON file (--config) and flags, validated with
// zod. Unknown keys and bad values are errors that name the key; nothing is ignored.

import { readFileSync } from "node:fs";
import { z } from "zod";
import { DEFAULT_MEMORY_LIMIT_MB, DEFAULT_TIMEOUT_MS, MIN_MEMORY_LIMIT_MB } from "./limits.js";

const ConfigFileSchema = z
  .object({
    executionTimeoutMs: z.number().int().positive().optional(),
    memoryLimitMb: z.number().int().min(MIN_MEMORY_LIMIT_MB).max(65_536).optional(),
    typeCheck: z.boolean().optional(),
    quiet: z.boolean().optional(),
  })
  .strict();

export type ConfigFile = z.infer<typeof ConfigFileSchema>;

/** The settings an evaluation runs with, every default filled in. */
export interface RunnerConfig {
  /** Wall-clock limit for one evaluation; the sandbox is killed (SIGKILL) when it passes. */
  executionTimeoutMs: number;
  /** V8 heap limit; the resident-memory watchdog allows this plus a fixed allowance. */
  memoryLimitMb: number;
  typeCheck: boolean;
  quiet: boolean;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

function describeIssues(source: string, error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      if (issue.code === "unrecognized_keys") {
        return `${source}: unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `"${k}"`).join(", ")}` +
          ` (known keys: ${Object.keys(ConfigFileSchema.shape).join(", ")})`;
      }
      const key = issue.path.join(".") || "(top level)";
      return `${source}: ${key}: ${issue.message}`;
    })
    .join("\n");
}

export function parseConfigFile(source: string, text: string): ConfigFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${source}: not valid JSON: ${(error as Error).message}`);
  }
  const parsed = ConfigFileSchema.safeParse(json);
  if (!parsed.success) throw new ConfigError(describeIssues(source, parsed.error));
  return parsed.data;
}

export function loadConfigFile(file: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(`--config ${file}: cannot read it: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return parseConfigFile(file, text);
}

/** Flags win over the file; the file wins over defaults. */
export function resolveConfig(file: ConfigFile, flags: ConfigFile): RunnerConfig {
  const pick = <K extends keyof ConfigFile>(key: K): ConfigFile[K] => flags[key] ?? file[key];
  return {
    executionTimeoutMs: pick("executionTimeoutMs") ?? DEFAULT_TIMEOUT_MS,
    memoryLimitMb: pick("memoryLimitMb") ?? DEFAULT_MEMORY_LIMIT_MB,
    typeCheck: pick("typeCheck") ?? true,
    quiet: pick("quiet") ?? false,
  };
}

/** Validates flag values with the same schema as the file, so the messages match. */
export function parseFlagConfig(flags: Record<string, unknown>): ConfigFile {
  const defined = Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined));
  const parsed = ConfigFileSchema.safeParse(defined);
  if (!parsed.success) throw new ConfigError(describeIssues("flags", parsed.error));
  return parsed.data;
}

export const defaultConfig: RunnerConfig = resolveConfig({}, {});
