// Unit tests of the edge check on tool arguments (runner/mcp-arguments.ts): what it lets
// through to the SDK, and how it names what is wrong. The real server's answers are in
// serve.test.ts and malformed.test.ts.

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { argumentProblem } from "../../runner/mcp-arguments.js";

const tools = new Map<string, z.ZodRawShape>([
  ["execute_in_session", { session_id: z.string(), code: z.string() }],
  ["list_sessions", {}],
]);

describe("tool arguments at the edge", () => {
  it("lets well-formed calls through, arguments omitted for a tool that takes none", () => {
    expect(argumentProblem(tools, { name: "execute_in_session", arguments: { session_id: "s1", code: "1" } })).toBeNull();
    expect(argumentProblem(tools, { name: "list_sessions" })).toBeNull();
    expect(argumentProblem(tools, { name: "list_sessions", arguments: {} })).toBeNull();
  });

  it("names every missing, mistyped and unknown argument, and what the tool takes", () => {
    expect(argumentProblem(tools, { name: "execute_in_session", arguments: { sessionId: "s1", code: 7 } })).toBe(
      'execute_in_session: argument "session_id" is missing (a string); argument "code": Invalid input: expected string, received number; ' +
        'unknown argument "sessionId" (it takes "session_id", "code")',
    );
    expect(argumentProblem(tools, { name: "list_sessions", arguments: { all: true } })).toBe('list_sessions: unknown argument "all" (it takes no arguments)');
  });

  it("names an unknown tool with the ones there are, and a call without a name", () => {
    expect(argumentProblem(tools, { name: "execute_typescript", arguments: {} })).toBe(
      'unknown tool "execute_typescript"; this server\'s tools are execute_in_session, list_sessions',
    );
    expect(argumentProblem(tools, { arguments: {} })).toMatch(/^tools\/call needs params \{name, arguments\}: /);
    expect(argumentProblem(tools, { name: "list_sessions", arguments: ["a"] })).toMatch(/^tools\/call needs params/);
  });
});
