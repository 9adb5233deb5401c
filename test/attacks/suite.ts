// Turns lists of attacks into tests: each attack is rejected by the validator through a real
// `tacit serve` (one for the whole file, served-validator.ts: exit 3 in its answer), and — with the
// validator bypassed through the runner's own API — still reaches nothing, whether `Deno` is left
// on globalThis or hidden.

import { describe, expect, it } from "vitest";
import { runBypassed } from "../helpers.js";
import { createWorld, expectWorldUntouched, seenOf } from "./fixtures.js";
import { type ServedValidator, servedValidator } from "./served-validator.js";
import type { Attack } from "./vectors.js";

/** Long enough for any refusal; short enough that a hanging attempt fails fast. */
const BYPASS_TIMEOUT_MS = 10_000;

/**
 * One describe per list of attacks (its title, its attacks), their validator refusals checked
 * through one `tacit serve` for the whole file: a serve each cost a Node start and a spare
 * sandbox's boot. Called once per file, at its top level.
 */
export function attackSuites(suites: readonly (readonly [title: string, attacks: Attack[]])[]): void {
  const served = servedValidator();
  for (const [title, attacks] of suites) attackSuite(title, attacks, served);
}

function attackSuite(title: string, attacks: Attack[], served: ServedValidator): void {
  describe(title, () => {
    for (const attack of attacks) {
      describe(attack.name, () => {
        it("is rejected by the validator (tacit serve, exit 3)", async () => {
          await served.expectRejected(attack.code(served.world.ctx), attack.rules);
        });

        for (const keepRuntime of [true, false]) {
          it(`reaches nothing with the validator bypassed (${keepRuntime ? "Deno kept" : "Deno hidden"})`, async ({ onTestFinished }) => {
            // A fresh world for each bypassed run (made here, not for the validator's tests, which use the serve's).
            const world = await createWorld();
            onTestFinished(() => world.cleanup());
            const result = await runBypassed(attack.code(world.ctx), {
              keepRuntime,
              config: { executionTimeoutMs: BYPASS_TIMEOUT_MS },
            });
            // The attempt really ran (a typo in an attack script must not pass as a refusal).
            if (attack.linkTime) expect(result.outcome, result.stdout).toBe("threw");
            else expect(result.stdout, result.error ?? "").toContain("reached");
            expect(result.outcome).not.toBe("timeout");
            await expectWorldUntouched(world, seenOf(result));
          });
        }
      });
    }
  });
}
