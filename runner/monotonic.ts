// Milliseconds on a monotonic clock, for measuring durations. The global `performance` would
// do as well, but its first use loads node:perf_hooks: about 1.5 ms of a short run, spent
// before its sandbox is sent the program.

export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
