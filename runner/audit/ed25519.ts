// Ed25519 for the audit log. Signatures are deterministic (RFC 8032): the same key and
// message give the same bytes whichever implementation makes them, so each side uses what
// fits it best:
//  - signing and deriving public keys, here: node:crypto (OpenSSL). It runs inside `tacit run`,
//    where @noble/ed25519's one-time base-point table (60–80 ms of BigInt work per process)
//    would be most of the audit log's cost, and where loading noble at all costs start-up;
//  - verifying: @noble/ed25519 with strict RFC 8032 rules, offline in `tacit audit verify`
//    (ed25519-verify.ts).
// test/audit checks that both agree byte for byte.

import { createPrivateKey, createPublicKey, type KeyObject, sign } from "node:crypto";

const keyObjects = new Map<string, KeyObject>();

/**
 * The key, imported as a JWK (RFC 8037: `d` is exactly the 32 raw bytes). Node builds the key from
 * `d` alone (raw, EVP_PKEY_new_raw_private_key) and only requires `x` to be a string: the public key
 * is derived from `d` (publicKeyOf, which keys.ts compares with the stored one). Imported as PKCS#8
 * DER it went through OpenSSL 3's decoder set-up: 1.0-1.4 ms at the opening of every audit log in
 * `tacit run`, against 0.55 ms this way.
 */
function privateKeyObject(privateKey: Uint8Array): KeyObject {
  const id = Buffer.from(privateKey).toString("hex");
  let key = keyObjects.get(id);
  if (!key) {
    const d = Buffer.from(privateKey).toString("base64url");
    key = createPrivateKey({ key: { kty: "OKP", crv: "Ed25519", d, x: "" }, format: "jwk" });
    keyObjects.set(id, key);
  }
  return key;
}

/**
 * The raw 32-byte public key, read from its JWK form (RFC 8037: `x` is exactly those bytes).
 * Exported as DER (SPKI) it went through OpenSSL 3's encoder lookup: about 0.5 ms a call, and
 * up to several on the first, at every opening of an audit log (keys.ts checks the stored key).
 */
export function publicKeyOf(privateKey: Uint8Array): Uint8Array {
  const { x } = createPublicKey(privateKeyObject(privateKey)).export({ format: "jwk" });
  if (typeof x !== "string") throw new Error("the Ed25519 public key has no JWK form");
  return new Uint8Array(Buffer.from(x, "base64url"));
}

export function signBytes(message: Uint8Array, privateKey: Uint8Array): Uint8Array {
  return new Uint8Array(sign(null, message, privateKeyObject(privateKey)));
}

export const toHex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");

/** Bytes from lower- or upper-case hex; null unless it is exactly `length` bytes of hex. */
export function fromHex(hex: string, length: number): Uint8Array | null {
  if (hex.length !== length * 2 || !/^[0-9a-fA-F]*$/.test(hex)) return null;
  return new Uint8Array(Buffer.from(hex, "hex"));
}
