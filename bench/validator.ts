// How the validator's time grows with the shape hostile code gives a script, for information
// (no target: the machine's noise is larger than a growth ratio can bear). Each shape is
// validated at sizes each twice the one before, round-robin, in this process (the validator
// runs on the host's main thread); the nesting probe, a child process with limits of its own
// (nesting.ts), is left out. Beside the whole validation, two of its steps alone: the scope
// analysis (@typescript-eslint/scope-manager, whose `through` lists grow with nesting times
// names: bounded by NESTED_NAME_USES_LIMIT, past which the validator refuses the script before
// it), and the map-function purity check (pure-functions.ts, linear). Linear work takes about
// 2x at twice the size; quadratic about 4x.

import { analyze } from "@typescript-eslint/scope-manager";
import { NESTED_NAME_USES_LIMIT } from "../runner/limits.js";
import { parseSync, PROGRAM_OPTIONS } from "../runner/parser.js";
import { analyzePureFunctions, type AstNode } from "../runner/pure-functions.js";
import { validate } from "../runner/validator.js";
import { median } from "./measure.js";

/** `depth` flatMaps on one classified value, nested, around `inner`. */
function nestedMaps(depth: number, inner: string): string {
  return Array.from({ length: depth }, (_, i) => `c.flatMap((a${i}) => `).join("") + inner + ")".repeat(depth);
}

interface Shape {
  name: string;
  sizes: number[];
  code: (size: number) => string;
}

const SHAPES: Shape[] = [
  {
    // The script grows linearly with N; nesting times uses, quadratically.
    name: "N maps nested around 20·N uses of one name",
    sizes: [50, 100, 200, 400],
    code: (n) => `const k = 1;\nconst c = classify(1);\nconst r = ${nestedMaps(n, `classify([${"k, ".repeat(20 * n)}a0])`)};\n`,
  },
  {
    name: "N maps one after another",
    sizes: [1000, 2000, 4000, 8000],
    code: (n) => `const k = 1;\nconst c = classify(1);\n${Array.from({ length: n }, (_, i) => `const r${i} = c.map((v) => v + k);`).join("\n")}\n`,
  },
  {
    // Each call's branches are followed through 20 names each (pure-functions.ts, ALIAS_DEPTH_LIMIT) to the functions they name.
    name: "N maps of a condition between two names 20 aliases deep",
    sizes: [1000, 2000, 4000, 8000],
    code: (n) => {
      const aliases = (base: string): string => Array.from({ length: 20 }, (_, i) => `const ${base}${i + 1} = ${base}${i};`).join("\n");
      const calls = Array.from({ length: n }, (_, i) => `const r${i} = c.map(v${i % 2} ? f20 : g20);`).join("\n");
      return `const k = 1;\nconst c = classify(1);\nconst v0 = true, v1 = false;\nconst f0 = (v: number) => v + k;\nconst g0 = (v: number) => v - k;\n${aliases("f")}\n${aliases("g")}\n${calls}\n`;
    },
  },
  {
    // Each map captures every parameter outside it: N²/2 captures, the rewriter's output.
    name: "N maps nested, the innermost using every parameter",
    sizes: [100, 200, 400, 800],
    code: (n) => `const c = classify(1);\nconst r = ${nestedMaps(n, `classify(${Array.from({ length: n }, (_, i) => `a${i}`).join(" + ")})`)};\n`,
  },
];

function callsIn(node: AstNode, found: AstNode[]): AstNode[] {
  if (node.type === "CallExpression") found.push(node);
  for (const key in node) {
    const child = node[key];
    for (const item of Array.isArray(child) ? child : [child]) {
      if (typeof item === "object" && item !== null && typeof (item as AstNode).type === "string") callsIn(item as AstNode, found);
    }
  }
  return found;
}

interface Timing {
  whole: number;
  scopes: number;
  purity: number;
  refused: boolean;
}

function timeOnce(code: string): Timing {
  let started = performance.now();
  const result = validate(code, "script.ts", code, () => null, null);
  const whole = performance.now() - started;
  const refused = result.diagnostics.some((d) => d.rule === "too-deep");
  if (!result.ok && !refused) throw new Error(`the bench's script was refused: ${result.diagnostics[0]?.message}`);
  const { program } = parseSync("script.ts", code, PROGRAM_OPTIONS);
  started = performance.now();
  const scopes = analyze(program as never, { sourceType: "module", lib: [] });
  const scopesMs = performance.now() - started;
  const calls = callsIn(program as unknown as AstNode, []);
  started = performance.now();
  analyzePureFunctions(code, calls, new Set(), scopes, new Set(), () => undefined);
  return { whole, scopes: scopesMs, purity: performance.now() - started, refused };
}

export function benchValidator(runs: number): boolean {
  console.log(`\nvalidator growth (${runs} runs each, sizes interleaved; nested-name limit ${NESTED_NAME_USES_LIMIT.toLocaleString("en-US")}; for information)`);
  for (const shape of SHAPES) {
    const codes = shape.sizes.map((size) => shape.code(size));
    const samples = codes.map(() => [] as Timing[]);
    for (let round = 0; round < runs + 2; round++) {
      codes.forEach((code, i) => {
        const timing = timeOnce(code);
        if (round >= 2) samples[i]!.push(timing);
      });
    }
    console.log(`  ${shape.name}`);
    let before: { whole: number; scopes: number; purity: number } | null = null;
    shape.sizes.forEach((size, i) => {
      const m = {
        whole: median(samples[i]!.map((t) => t.whole)),
        scopes: median(samples[i]!.map((t) => t.scopes)),
        purity: median(samples[i]!.map((t) => t.purity)),
      };
      const cell = (key: keyof typeof m) => `${m[key].toFixed(1).padStart(7)} ms${before ? ` (${(m[key] / before[key]).toFixed(1)}x)` : "       "}`;
      const refused = samples[i]![0]!.refused ? "  refused: past the limit" : "";
      console.log(
        `    N = ${String(size).padStart(5)} ${String(codes[i]!.length).padStart(7)} B   validate ${cell("whole")}   scope analysis alone ${cell("scopes")}   map purity alone ${cell("purity")}${refused}`,
      );
      before = m;
    });
  }
  return true;
}
