// Verifying audit-log signatures with @noble/ed25519 (strict RFC 8032), for `tacit audit
// verify`; kept apart from the signing side (ed25519.ts) so that a run writing a log never
// loads noble. noble's own signing is here too, for the test that both sides agree.

import * as ed from "@noble/ed25519";
import { sha512 } from "@noble/hashes/sha2.js";

ed.hashes.sha512 = (message) => sha512(message);

/** False (never a throw) for a malformed key or signature: the caller reports why. */
export function verifyBytes(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  try {
    // Strict RFC 8032 rules rather than ZIP-215: a log signature has no consensus to agree
    // with, and strictness rules out the small-order keys that "verify" anything.
    return ed.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

/** noble's own signature and public key, for the test that both implementations agree. */
export const nobleSign = (message: Uint8Array, privateKey: Uint8Array): Uint8Array => ed.sign(message, privateKey);
export const noblePublicKeyOf = (privateKey: Uint8Array): Uint8Array => ed.getPublicKey(privateKey);
