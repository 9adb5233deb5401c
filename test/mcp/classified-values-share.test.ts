// How many Classified values all the sessions and calls of one tacit serve keep together is
// bounded, not only how many one session keeps. Each value costs the host about 300 bytes
// whatever it holds, which no plaintext budget sees, and a session keeps up to 100,000: a
// security review made that many with classify("") in each of its sessions, and a tacit serve
// with a 250 MB heap died in its eleventh session, every session with it. Past the server's
// share, making a value is refused with an error that says so; deleting sessions gives it back.

import { afterAll, beforeAll, expect, it } from "vitest";
import { createSession, runInSession, type SmallHeapServe, smallHeapServe } from "../helpers.js";

let server: SmallHeapServe;

/**
 * tacit serve's heap (--max-old-space-size): the server's share of values is an eighth of its
 * heap limit (young generation included), 52,428 values at 80 (one session's 40,000 fit; the
 * second session's are refused), and each value is a round trip to the host. At 96 (58,982) the
 * same proof took about 12,000 more, at 128 (72,089) 13,000 more again; at 48 (39,321) the host,
 * its heap nearly full, spent so long collecting that a round of 15,000 ran past the time limit.
 */
const HEAP_MB = 80;

beforeAll(async () => {
  server = await smallHeapServe("tacit-classified-values-share-", ["--no-check"], undefined, HEAP_MB);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

/**
 * Values made a round. Twice this fits the server's share (the first session is never refused)
 * and three times does not (the second session is, in its first round); and a fresh session
 * making this many after the deletes shows more given back than the second session's part of
 * the share (52,428 - 40,000), so the first session's share is given back too.
 */
const ROUND = 20_000;

/** ROUND more values in the session, or as many as it is allowed, with the refusal printed. */
const MAKING = `try {
  for (let i = 0; i < ${ROUND}; i++) kept.push(classify(""));
} catch (error) {
  println(String(error));
}
kept.length`;

const REFUSAL = "refused: the sessions and calls of this tacit together already hold";

it("sessions that each make as many values as a session keeps cannot together fill the server; the refusal says what to do", async () => {
  const { client } = server;
  const sessions: string[] = [];
  let refused: string | null = null;
  // Without a bound for the server, twelve sessions of 40,000 values (about 144 MB) cannot fit a server with an 80 MB
  // heap: with the bound taken out, a round of its third session ran past the time limit, the heap full (as twelve of
  // 50,000, about 180 MB, ended one with a 128 MB heap).
  for (let n = 0; n < 12 && refused === null; n++) {
    const session = await createSession(client);
    sessions.push(session);
    expect(await runInSession(client, session, `const kept: Classified<string>[] = [];`, 60_000)).toMatchObject({ exitCode: 0 });
    for (let round = 0; round < 2 && refused === null; round++) {
      const result = await runInSession(client, session, MAKING, 120_000);
      expect(result, server.stderr().slice(-400)).toMatchObject({ exitCode: 0 });
      if (result.stdout.includes(REFUSAL)) refused = result.stdout;
    }
  }
  expect(refused).toContain("Delete sessions you no longer need (delete_repl_session)");
  // Refused in a later session than the first: what the sessions hold together, not what one does.
  expect(sessions.length).toBeGreaterThan(1);
  // The values made stay usable; deleting the sessions gives their share back.
  expect(await runInSession(client, sessions[0]!, `println(kept.length > 0, kept[0]);`, 60_000)).toMatchObject({ exitCode: 0, stdout: "true Classified(***)\n" });
  for (const session of sessions) await client.callTool({ name: "delete_repl_session", arguments: { session_id: session } });
  const fresh = await createSession(client);
  const result = await runInSession(client, fresh, `const kept: Classified<string>[] = [];\n${MAKING}`, 120_000);
  expect(result).toMatchObject({ exitCode: 0, stdout: `${ROUND}\n` });
}, 900_000);
