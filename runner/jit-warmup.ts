// V8 optimizes a function once it has run a budget of its bytecode (--interrupt-budget, 66 KiB
// in Node 20). A script's loop of requests runs the host's request path (the frame parser, the
// dispatcher, the checked open and read) thousands of times from a cold start, and at the
// default those functions reached TurboFan only after 1,000-4,000 reads of a 10,000-read loop.
// A lower budget from the start made every start slower (the compiler then optimizes start-up
// code sooner too: hello.ts 146 -> 156 ms at a quarter, see f7a851b), so it is lowered only
// once a run has made many requests: its start is over by then, and what runs hot is the
// request path. A short script never gets there.
//
// V8 keys its code cache by a hash of its flags, taken afresh when they change: a cache is
// rejected if made under other flags, and one made now would be rejected at the next start. So
// the code cache (cli/code-cache.ts) compiles and saves at the start's budget (atStartFlags),
// else every long run rewrote the cache of each module it loaded late.

import { setFlagsFromString } from "node:v8";

/**
 * Requests after which the budget is lowered, counted over the whole process (a serve's
 * sessions together). Far more than a short script makes; lowered at 200 instead, a run of 1,000
 * reads spent a little more CPU than at the default (the compiler's work came before its gain).
 */
export const REQUESTS_BEFORE_LOWERING = 500;
/** Node 20's default budget (bytes of bytecode run), which tacit starts with. */
const START_INTERRUPT_BUDGET = 67_584;
/** A quarter of it. */
const LOWERED_INTERRUPT_BUDGET = START_INTERRUPT_BUDGET / 4;

let requestsSeen = 0;
let lowered = false;

function setBudget(bytes: number): void {
  setFlagsFromString(`--interrupt-budget=${bytes}`);
}

/** Counts one request a sandbox made; the one that reaches the threshold lowers V8's budget. */
export function requestMade(): void {
  if (++requestsSeen !== REQUESTS_BEFORE_LOWERING) return;
  setBudget(LOWERED_INTERRUPT_BUDGET);
  lowered = true;
}

/** `work` (compiling with a code cache, or making one) run under the flags tacit started with. */
export function atStartFlags<T>(work: () => T): T {
  if (!lowered) return work();
  setBudget(START_INTERRUPT_BUDGET);
  try {
    return work();
  } finally {
    setBudget(LOWERED_INTERRUPT_BUDGET);
  }
}
