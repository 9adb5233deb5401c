// The part of Deno's node:vm the pure evaluator uses (see realmForJob in evaluator.ts). Declared
// here, as deno.d.ts declares Deno's own APIs, so the evaluator is checked against exactly that.
declare module "node:vm" {
  /** A context whose global is an ordinary one of its own (no interceptors onto an object of the caller's realm). */
  export const constants: { readonly DONT_CONTEXTIFY: symbol };
  /** A new realm: its own global object and built-ins. */
  export function createContext(contextObject: symbol): object;
  /** Runs `code` as a script in `context`'s realm and returns its completion value. */
  export function runInContext(code: string, context: object): unknown;
}
