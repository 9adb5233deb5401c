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
//
// Measured and left alone (bench/read-split.ts splits each thousand reads' CPU time by side; a
// machine at load 15-28 on 2 CPUs, TACIT_SPIN=never, interleaved medians): the first thousands'
// extra time is mostly this host's, its main thread in cold code and V8's compiler on its
// other threads (~160 ms CPU over the first 2,000 reads), the sandbox's about a quarter of it.
//  - The sandbox's Deno (V8 15: Maglev after 400 calls, TurboFan after 3,000) with 100 and 1,000
//    instead: its CPU per thousand reads 60 43 33 38 against 58 37 34 32 (7 runs each); the stub
//    alone against answers at once, 13-23 ms per thousand cold either way. No gain.
//  - --maglev here with the lowered budget (experimental in Node 20's V8 11.3, the default from
//    Node 22): the host's main thread 541 ms over the first 3,000 reads against 588, the whole
//    loop the same (1,367 ms, 15 runs each): too little, within the noise, for a compiler tier
//    Node 20 does not ship.
//  - An eighth instead of a quarter, or lowered at the 250th request: within the noise (11 runs).
//  - Set at the first request, --always-sparkplug (the request path's functions, compiled lazily
//    then, straight to baseline code) or --no-lazy-feedback-allocation (their inline caches from
//    the first call): the whole 10,000-read run's CPU (host and sandbox, TACIT_SPIN=never, load
//    8-14, 12 interleaved runs each) 1,580 and 1,550 ms against 1,550. No gain.

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
