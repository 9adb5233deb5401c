// Turns a list of attacks into tests: each attack is rejected by the validator through the
// real CLI, and — with the validator bypassed through the runner's own API — still reaches
// nothing, whether `Deno` is left on globalThis or hidden.

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runBypassed, runScript } from "../helpers.js";
import { type AttackWorld, createWorld, expectWorldUntouched, seenOf } from "./fixtures.js";
import type { Attack } from "./vectors.js";

/** Long enough for any refusal; short enough that a hanging attempt fails fast. */
const BYPASS_TIMEOUT_MS = 10_000;

export function attackSuite(title: string, attacks: Attack[]): void {
  describe(title, () => {
    let world: AttackWorld;
    beforeEach(async () => {
      world = await createWorld();
    });
    afterEach(async () => {
      await world.cleanup();
    });

    for (const attack of attacks) {
      describe(attack.name, () => {
        it("is rejected by the validator (CLI, exit 3)", async () => {
          const result = await runScript(attack.code(world.ctx));
          expect(result.code, result.stderr).toBe(3);
          for (const rule of attack.rules) expect(result.stderr).toContain(`[${rule}]`);
          await expectWorldUntouched(world, result);
        });

        for (const keepRuntime of [true, false]) {
          it(`reaches nothing with the validator bypassed (${keepRuntime ? "Deno kept" : "Deno hidden"})`, async () => {
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
