// The first of each test file's setup files (vitest.config.ts). Test files share their worker
// process (isolate: false), which spares each file loading vitest afresh; but tacit's modules keep
// what they found once per process (the tacit home's protected paths, TACIT_SPIN, the type-check
// cache's home, the network namespace's probe), as a tacit process should, and a file running the
// runner in this process must find them as its own environment makes them, not as the file
// before it did. So the module registry is emptied before each file: every module the file (and
// file-home.ts after this) imports is evaluated afresh; only vitest's own and node_modules' stay.

import { vi } from "vitest";

vi.resetModules();
