// A secret header echoed in hex, through the real CLI: a server that shows the raw request's bytes
// in hex (Go's %x, Python's bytes.hex(), Node's toString("hex"), a packet dump's "73 6b 2d" or
// "73:6b:2d"). Redaction knew no hex form of a request's secret, and a script decoded it back.

import { describe, expect, it } from "vitest";
import { expectNoLeak } from "../files/fixtures.js";
import { attemptOf, attempts, isEnvFile, lit, permit, perTestResources, secretNetScript, tacit } from "./fixtures.js";

const resources = perTestResources("tacit-net-hex-echo-", { concurrent: true });

const SHAPES: Record<string, (hex: string[]) => string> = {
  lower: (hex) => hex.join(""),
  upper: (hex) => hex.join("").toUpperCase(),
  spaced: (hex) => hex.join(" "),
  colons: (hex) => hex.join(":").toUpperCase(),
};

describe.concurrent("a secret header echoed in hex", () => {
  it("is masked, in either case, with or without a separator between bytes; the script decodes no piece of it", async () => {
    const a = await resources.server((request, response) => {
      const raw = Buffer.from(`GET ${request.url} HTTP/1.1\r\nauthorization: ${String(request.headers.authorization)}\r\n\r\n`);
      const hex = [...raw].map((byte) => byte.toString(16).padStart(2, "0"));
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ raw: SHAPES[request.url.slice(1)]!(hex) }));
    });
    const { root, canary } = resources.projectWithSecret();
    const result = await tacit(
      root,
      secretNetScript([`127.0.0.1:${a.port}`], `
  for (const shape of ${JSON.stringify(Object.keys(SHAPES))}) {
    attempt(shape, () => {
      const raw: string = JSON.parse(net.httpGet(${lit(a.origin)} + "/" + shape, { secretHeaders: { authorization: token } })).raw;
      // What the script makes of it: the hex digits decoded, whatever was masked left out.
      const digits = raw.split("[redacted]").map((part) => part.replace(/[^0-9a-fA-F]/g, ""));
      return [raw.includes("[redacted]"), digits.map((part) => (part.match(/../g) ?? []).map((pair) => String.fromCharCode(parseInt(pair, 16))).join(""))];
    });
  }
`),
      permit(`127.0.0.1:${a.port}`),
    );
    expect(result.code, result.stderr).toBe(0);
    const found = attempts(result.stdout);
    for (const shape of Object.keys(SHAPES)) {
      const seen = attemptOf(found, shape);
      expect(seen.status, JSON.stringify(seen)).toBe("ok");
      expect((seen.value as [boolean, string[]])[0], shape).toBe(true);
      // The rest of the echo is there, decoded as the script decodes it.
      expect((seen.value as [boolean, string[]])[1].join(""), shape).toContain(`authorization: `);
    }
    expect(a.received.filter((r) => r.headers.authorization === canary)).toHaveLength(Object.keys(SHAPES).length);
    const random = canary.slice("canary-".length);
    for (let at = 0; at + 8 <= random.length; at++) expect(result.stdout).not.toContain(random.slice(at, at + 8));
    expectNoLeak(canary, result, root, isEnvFile);
  });
});
