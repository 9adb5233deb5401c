// Turning values into text for println/print/printf/console.*, inside the sandbox.

export type Inspect = (value: unknown) => string;

/** println-style: strings as they are, anything else as Deno's REPL would show it. */
export function formatValues(values: readonly unknown[], inspect: Inspect): string {
  return values.map((v) => (typeof v === "string" ? v : inspect(v))).join(" ");
}

/**
 * console.log-style: a leading string with `%` directives is a format, the rest as
 * formatValues. Unknown directives are left as written.
 */
export function formatConsole(values: readonly unknown[], inspect: Inspect): string {
  const [first, ...rest] = values;
  if (typeof first !== "string" || !first.includes("%")) return formatValues(values, inspect);
  const { text, used } = substitute(first, rest, inspect, false);
  const remaining = rest.slice(used);
  return remaining.length === 0 ? text : text + " " + formatValues(remaining, inspect);
}

/**
 * printf: %s %d %i %f (with .N precision) %x %o %O %j %c %%. Too few arguments is an error,
 * not a silent "undefined", so an agent sees its mistake.
 */
export function formatPrintf(format: string, args: readonly unknown[], inspect: Inspect): string {
  return substitute(format, args, inspect, true).text;
}

const DIRECTIVE = /%(?:(\.\d+)?([sdifxoOjc])|%)/g;

function substitute(
  format: string,
  args: readonly unknown[],
  inspect: Inspect,
  strict: boolean,
): { text: string; used: number } {
  let used = 0;
  const text = format.replace(DIRECTIVE, (whole, precision: string | undefined, kind: string | undefined) => {
    if (whole === "%%") return "%";
    if (used >= args.length) {
      if (strict) throw new TypeError(`printf: format "${format}" needs more arguments than the ${args.length} given`);
      return whole;
    }
    const arg = args[used++];
    switch (kind) {
      case "s":
        return typeof arg === "string" ? arg : inspect(arg);
      case "d":
      case "i":
        return typeof arg === "bigint" ? arg.toString() : String(Math.trunc(Number(arg)));
      case "f": {
        const n = Number(arg);
        return precision ? n.toFixed(Number(precision.slice(1))) : String(n);
      }
      case "x":
        return typeof arg === "bigint" ? arg.toString(16) : Math.trunc(Number(arg)).toString(16);
      case "j":
        return JSON.stringify(arg) ?? "undefined";
      case "c":
        return ""; // CSS styling has no meaning on a terminal; consumed like Deno's console does.
      default:
        return inspect(arg);
    }
  });
  return { text, used };
}
