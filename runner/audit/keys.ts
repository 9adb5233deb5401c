// The audit log's Ed25519 signing key: generated on first use, kept owner-only in the tacit
// home (see tacit-home.ts). Whoever can read it can sign heads, that is forge a log that
// verifies; whoever can write it can swap the public key a verifier trusts. So a key file
// others can read or write is refused, not used.

import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { ensureTacitHome, tacitHome } from "../tacit-home.js";
import { fromHex, publicKeyOf, toHex } from "./ed25519.js";
import { createExclusive } from "./exclusive-file.js";
import { ownFileProblemText, readOwnFile } from "./own-file.js";
import { PARSED_ONCE } from "../parse-once.js";

export interface SigningKey {
  privateKey: Uint8Array;
  publicKey: Uint8Array;
  publicKeyHex: string;
  file: string;
}

/** A key file that is missing its permissions, unreadable or malformed; says what to do. */
export class AuditKeyError extends Error {
  override name = "AuditKeyError";
}

const KEY_FORMAT = "tacit-audit-key-v1";
const hex32 = z.string().regex(/^[0-9a-f]{64}$/, "64 lower-case hex digits");
const keyFileSchema = z.object({
  format: z.literal(KEY_FORMAT),
  algorithm: z.literal("ed25519"),
  privateKey: hex32,
  publicKey: hex32,
  created: z.string(),
});

const KEY_FILE_NAME = "audit-key.json";

/** Where the key lives by default; `create` makes the tacit home (0700) if needed. */
export function defaultKeyFile(create: boolean): string {
  return path.join(create ? ensureTacitHome() : tacitHome(), KEY_FILE_NAME);
}

/** The key in `file` (default: the tacit home's), generated and stored first if there is none. */
export function loadOrCreateSigningKey(file: string = defaultKeyFile(true)): SigningKey & { created: boolean } {
  const resolved = path.resolve(file);
  let created = false;
  let stored = readKeyFile(resolved);
  if (stored === null) {
    created = createKeyFile(resolved);
    stored = readKeyFile(resolved);
  }
  if (stored === null) throw new AuditKeyError(`the audit key file ${resolved} disappeared while it was being created; run the command again`);
  return { ...stored, created };
}

/** Only the public key (hex) and its file, or null when there is no key file yet. */
export function readPublicKey(file: string = defaultKeyFile(false)): { publicKeyHex: string; file: string } | null {
  const stored = readKeyFile(path.resolve(file));
  return stored && { publicKeyHex: stored.publicKeyHex, file: stored.file };
}

/** null when the file does not exist; throws AuditKeyError for anything else wrong with it. */
function readKeyFile(file: string): SigningKey | null {
  const text = readOwnFile(file, 0o077, (problem) => {
    switch (problem.kind) {
      case "unreadable":
        return new AuditKeyError(`cannot read the audit key file ${file}: ${problem.message}`);
      case "not-a-file":
        return new AuditKeyError(`the audit key file ${file} is not a regular file`);
      case "mode":
        return new AuditKeyError(
          `the audit key file ${file} is accessible to other users (mode ${problem.mode.toString(8)}): ` +
            `anyone who can read it can sign forged audit logs. Run \`chmod 600 ${file}\` if you trust that nobody copied ` +
            `or replaced it, or delete it to have a new key made (logs signed with the old one then verify only with --public-key <old key>).`,
        );
      case "owner":
        return new AuditKeyError(`the audit key file ${file} belongs to another user; set TACIT_HOME to a directory of your own`);
      default:
        return new AuditKeyError(ownFileProblemText(`the audit key file ${file}`, file, problem, "it is not used"));
    }
  }, tacitHome());
  if (text === null) return null;
  let parsed: z.infer<typeof keyFileSchema>;
  try {
    parsed = keyFileSchema.parse(JSON.parse(text), PARSED_ONCE);
  } catch {
    throw new AuditKeyError(`the audit key file ${file} is not a tacit audit key (${KEY_FORMAT}); move it away to have a new key made`);
  }
  const privateKey = fromHex(parsed.privateKey, 32)!;
  const publicKey = publicKeyOf(privateKey);
  // A stored public key that does not belong to the private key would make every head fail
  // to verify against the key `tacit audit key` prints: corruption, or a planted key.
  if (toHex(publicKey) !== parsed.publicKey) {
    throw new AuditKeyError(`the audit key file ${file} is inconsistent: its public key does not belong to its private key`);
  }
  return { privateKey, publicKey, publicKeyHex: parsed.publicKey, file };
}

/** Writes a new key, 0600 from its creation and never over a key another process made meanwhile. */
function createKeyFile(file: string): boolean {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const privateKey = new Uint8Array(randomBytes(32));
  const content =
    JSON.stringify(
      {
        format: KEY_FORMAT,
        algorithm: "ed25519",
        privateKey: toHex(privateKey),
        publicKey: toHex(publicKeyOf(privateKey)),
        created: new Date().toISOString(),
      },
      null,
      2,
    ) + "\n";
  try {
    return createExclusive(file, content);
  } catch (error) {
    throw new AuditKeyError(`cannot create the audit key file ${file}: ${(error as Error).message}`);
  }
}
