// `npm run bench`: every benchmark, each printing medians and ratios against a floor
// measured in the same run. BENCH_RUNS sets the number of samples (default 15).

import { benchStartup } from "./startup.js";

const runs = Number(process.env.BENCH_RUNS ?? 15);
const results = [benchStartup(runs)];
console.log(results.every(Boolean) ? "\nall targets met" : "\nsome targets missed (see above)");
