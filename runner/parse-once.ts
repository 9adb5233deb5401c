// zod compiles an object schema into a function of its own the first time it parses with it
// (new Function): that pays for itself over many parses (sandbox frames, MCP arguments) but
// costs a few milliseconds for a value parsed once per run: the flags, a config file, the
// audit key, an anchor, the audit log's last line. Those parse with this context: the same
// checks, without the compiled fast path.
export const PARSED_ONCE = { jitless: true } as const;
