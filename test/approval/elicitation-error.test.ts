// An MCP client that declared elicitation (it can ask its user) but answered tacit's question with
// a JSON-RPC error instead of the user's answer: the action is refused (fail closed), and the
// refusal says that asking through the client failed, and to tell the user. It said "no one could
// be asked" and advised running tacit "where it can ask (a terminal, or an MCP client with
// elicitation)", which the client was. Through a real tacit serve and the real MCP SDK client,
// whose handler throws (the SDK answers the question with a JSON-RPC error).

import { afterEach, describe, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { executeShownError, makeWorld, serveWorld, type World } from "./fixtures.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function world(): World {
  const temp = realTempDir("tacit-elicit-error-");
  cleanups.push(temp.cleanup);
  return makeWorld(temp.dir);
}

const WRITE = `requestFileSystem(".", (fs) => fs.access("a.txt").write("x"));\n`;

describe("a client's error in answer to a question", () => {
  for (const tier of ["always-ask", "approve-once"] as const) {
    it(`${tier}: is a no, and the refusal says asking failed and to tell the user, not to run where tacit can ask`, async () => {
      const w = world();
      const config = w.config([{ action: "fs.write", tier }]);
      let asked = 0;
      const client = await serveWorld(w, ["--config", config], {
        onElicit: () => {
          asked++;
          throw new Error("the question could not be shown:\nno window");
        },
      });
      cleanups.push(() => void client.close());
      const text = await executeShownError(client, WRITE);
      // The bad thing: the write went ahead without a person's yes.
      expect(w.exists("a.txt"), text).toBe(false);
      expect(asked).toBe(1);
      const refusal = text.split("\n")[0]!;
      expect(refusal).toContain(`refused: the policy requires a person's approval (${tier}), and asking the user through the MCP client failed (`);
      expect(refusal).toContain("the client answered the question with an error instead of the user's answer: ");
      // The client's error, on one line.
      expect(refusal).toContain("the question could not be shown: no window");
      expect(refusal).toContain("which counts as no. Do not retry it at once; tell the user, whose client could not put the question to them");
      expect(refusal).not.toContain("where it can ask");
      expect(refusal).not.toContain("no one could be asked");
      if (tier === "approve-once") expect(refusal).toContain("or pre-approve it with `tacit approvals grant ");
      else expect(refusal).not.toContain("tacit approvals grant");
    }, 30_000);
  }
});
