// Capability tokens: unguessable, issued only by the host, checked on every use, and
// revoked when the scope that asked for them ends. The sandbox holds nothing but the token.

import type { HostPattern } from "./net/host-policy.js";
import { randomToken } from "./random-token.js";
import { EffectFailure, PolicyDenial } from "./refusals.js";

export interface FileSystemScope {
  kind: "fs";
  /** The root as the agent named it, made absolute. */
  root: string;
  /** The root with every symlink resolved: containment is decided against this. */
  realRoot: string;
}

export interface ExecScope {
  kind: "exec";
  /** The commands the block asked for (each already checked against the policy). */
  commands: ReadonlySet<string>;
}

export interface NetworkScope {
  kind: "net";
  /** The hosts the block asked for, as patterns. */
  hosts: readonly HostPattern[];
}

export type Capability = FileSystemScope | ExecScope | NetworkScope;

const SCOPE_FUNCTION: Record<Capability["kind"], string> = {
  fs: "requestFileSystem",
  exec: "requestExecPermission",
  net: "requestNetwork",
};

/**
 * Revoked tokens remembered, at most, to say that a token was revoked rather than never
 * issued: a session's table lives as long as the session, and one that opened a scope a
 * million times kept a million tokens (about 100 MB). A token forgotten is refused all the
 * same, with the message that covers both.
 */
export const REVOKED_TOKENS_KEPT = 10_000;

/**
 * Capabilities live at once, at most: each is an entry in the host until its block returns or
 * its promise settles, and a block whose promise never settles holds its entry until the
 * evaluation ends. A seventh security review opened such scopes in a loop: 1.7 million in
 * 110 s, tacit at 676 MB and growing with the time limit, the sandbox well under its own.
 */
export const LIVE_CAPABILITIES_LIMIT = 10_000;

/**
 * What live capabilities may hold together, in bytes as heldBytes counts them. The count above
 * bounds how many are live, not what each holds: a network scope keeps every host pattern it
 * names (up to 1,000 of 1,024 characters), and a security review kept such scopes open in a
 * never-settling block each, 1.6 MB of tacit's memory a scope: one run grew tacit to 4.3 GB, at
 * its heap limit (a session keeps its scopes from snippet to snippet, and tacit serve holds all
 * sessions in one heap). 10,000 scopes of a root or a host each fit within.
 */
export const LIVE_CAPABILITIES_HELD_BYTES = 8 * 1024 * 1024;

/** Bytes counted for each capability, and for each host pattern and command it names, besides their text (two bytes a character). */
const CAPABILITY_BYTES = 200;
/** Measured: some 500 bytes of tacit's memory a host pattern of a few characters (its matcher and labels). */
const HOST_PATTERN_BYTES = 512;
const COMMAND_BYTES = 64;

/** What the host holds for `capability`, roughly, in bytes. */
function heldBytes(capability: Capability): number {
  const textBytes = (text: string): number => 2 * text.length;
  switch (capability.kind) {
    case "fs":
      return CAPABILITY_BYTES + textBytes(capability.root) + textBytes(capability.realRoot);
    case "exec": {
      let bytes = CAPABILITY_BYTES;
      for (const command of capability.commands) bytes += COMMAND_BYTES + textBytes(command);
      return bytes;
    }
    case "net": {
      let bytes = CAPABILITY_BYTES;
      for (const pattern of capability.hosts) bytes += HOST_PATTERN_BYTES + textBytes(pattern.source) + textBytes(pattern.literalHost ?? "");
      return bytes;
    }
  }
}

const megabytes = (bytes: number): string => (bytes / (1024 * 1024)).toFixed(1);

export class CapabilityTable {
  private readonly live = new Map<string, Capability>();
  /** In the order they were revoked: the oldest is forgotten first. */
  private readonly revoked = new Map<string, Capability["kind"]>();
  /** What the live capabilities hold together (see heldBytes). */
  private liveBytes = 0;

  issue(capability: Capability): string {
    if (this.live.size >= LIVE_CAPABILITIES_LIMIT) {
      const scope = SCOPE_FUNCTION[capability.kind];
      throw new EffectFailure(
        `${scope}(): refused: ${LIVE_CAPABILITIES_LIMIT} capabilities are open at once, the most the host keeps: each block ` +
          "given to requestFileSystem, requestExecPermission or requestNetwork holds one until it returns (an async block, " +
          "until its promise settles). Do many operations in one block instead of a block each, and let blocks settle before opening more",
      );
    }
    const bytes = heldBytes(capability);
    if (this.liveBytes + bytes > LIVE_CAPABILITIES_HELD_BYTES) {
      const scope = SCOPE_FUNCTION[capability.kind];
      const named = capability.kind === "net" ? `${capability.hosts.length} host patterns` : capability.kind === "exec" ? `${capability.commands.size} commands` : "its root";
      throw new EffectFailure(
        `${scope}(): refused: the capabilities open at once would hold ${megabytes(this.liveBytes + bytes)} MB together in the host with this one ` +
          `(${megabytes(bytes)} MB: ${named} and their text), more than the ${megabytes(LIVE_CAPABILITIES_HELD_BYTES)} MB it keeps for them. ` +
          "Name only the hosts or commands the block uses, each once, and let blocks that are still open (an async block's promise) settle before opening more",
      );
    }
    const token = randomToken(24);
    this.live.set(token, capability);
    this.liveBytes += bytes;
    return token;
  }

  revoke(token: string): void {
    const capability = this.live.get(token);
    if (!capability) return;
    this.live.delete(token);
    this.liveBytes -= heldBytes(capability);
    this.revoked.set(token, capability.kind);
    if (this.revoked.size > REVOKED_TOKENS_KEPT) this.revoked.delete(this.revoked.keys().next().value!);
  }

  /** The capability behind a token, or a denial saying why there is none. */
  get<K extends Capability["kind"]>(token: string, kind: K): Extract<Capability, { kind: K }> {
    const capability = this.live.get(token);
    if (capability && capability.kind === kind) return capability as Extract<Capability, { kind: K }>;
    const scope = SCOPE_FUNCTION[kind];
    if (this.revoked.get(token) === kind) {
      throw new PolicyDenial(
        `this capability was used outside its ${scope} scope: it was revoked when the block given to ${scope}() ended. ` +
          `Do the work inside the block (for an async block, before its promise settles), or call ${scope}() again.`,
      );
    }
    throw new PolicyDenial(
      `not a live capability of this host: only the object ${scope}() passes to its block can be used, and only while the block runs`,
    );
  }

  /** A live file-system scope (for naming its actions), or null. */
  fsScope(token: string): FileSystemScope | null {
    const capability = this.live.get(token);
    return capability?.kind === "fs" ? capability : null;
  }

  revokeAll(): void {
    for (const token of [...this.live.keys()]) this.revoke(token);
  }
}
