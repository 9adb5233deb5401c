import { describe, expect, it } from "vitest";
import { runBypassed, runScript } from "../helpers.js";

describe("smoke", () => {
  it("runs hello through the CLI", async () => {
    const r = await runScript('println("hi")');
    expect(r).toMatchObject({ code: 0, stdout: "hi\n" });
  });
  it("runs through the API with the validator off", async () => {
    const r = await runBypassed('println(typeof Deno)', { keepRuntime: true });
    expect(r.stdout).toBe("object\n");
    const h = await runBypassed('println(typeof Deno)');
    expect(h.stdout).toBe("undefined\n");
  });
});
