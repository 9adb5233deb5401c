// The audit log signs with node:crypto and verifies with @noble/ed25519 (see
// runner/audit/ed25519.ts, ed25519-verify.ts): both must agree exactly, or heads would fail to verify.

import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { publicKeyOf, signBytes } from "../../runner/audit/ed25519.js";
import { nobleSign, noblePublicKeyOf, verifyBytes } from "../../runner/audit/ed25519-verify.js";

describe("Ed25519: node:crypto and @noble/ed25519 agree", () => {
  it("derive the same public key and the same signature bytes, which noble verifies", () => {
    for (let i = 0; i < 8; i++) {
      const privateKey = new Uint8Array(randomBytes(32));
      const message = new Uint8Array(randomBytes(1 + i * 17));
      expect(Buffer.from(publicKeyOf(privateKey)).toString("hex")).toBe(Buffer.from(noblePublicKeyOf(privateKey)).toString("hex"));
      const signature = signBytes(message, privateKey);
      expect(Buffer.from(signature).toString("hex")).toBe(Buffer.from(nobleSign(message, privateKey)).toString("hex"));
      expect(verifyBytes(signature, message, publicKeyOf(privateKey))).toBe(true);
      const tampered = new Uint8Array(message);
      tampered[0] = tampered[0]! ^ 1;
      expect(verifyBytes(signature, tampered, publicKeyOf(privateKey))).toBe(false);
    }
  });
});
