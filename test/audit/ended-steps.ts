// What the tests of a run, repl or server stopped mid-call read in its audit log: its events, and
// whether every step it began says how it ended (see test/mcp/stop-under-way.test.ts).

import { existsSync, readFileSync } from "node:fs";
import { expect } from "vitest";
import { commandLineOf, descendantsOf } from "../processes.js";

export interface LoggedEvent {
  type: string;
  evaluation?: string;
  action?: number;
  kind?: string;
  decision?: string;
  via?: string;
  session?: string;
}

/** The events of the log at `log`, in order (none while it does not exist). */
export function loggedEvents(log: string): LoggedEvent[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => (JSON.parse(line) as { event: LoggedEvent }).event);
}

/** Every action requested has a decision and a result, and every evaluation started has ended. */
export function expectEveryStepEnded(logged: LoggedEvent[]): void {
  const key = (event: LoggedEvent): string => `${event.evaluation}#${event.action}`;
  const requested = logged.filter((event) => event.type === "action-requested").map(key);
  expect(requested.length).toBeGreaterThan(0);
  expect(logged.filter((event) => event.type === "decision").map(key)).toEqual(expect.arrayContaining(requested));
  expect(logged.filter((event) => event.type === "action-result").map(key)).toEqual(expect.arrayContaining(requested));
  const started = logged.filter((event) => event.type === "evaluation-started").map((event) => event.evaluation);
  expect(started.length).toBeGreaterThan(0);
  expect(logged.filter((event) => event.type === "evaluation-ended").map((event) => event.evaluation)).toEqual(expect.arrayContaining(started));
}

/**
 * Resolves once a process below `pid` runs `command` (its command line, the program's directory
 * aside), and a process watch's `seen` (watchProcesses) holds it too, or `gone()` says to stop
 * looking. Without the second wait, a signal sent at once could end the command before the
 * watch's next look, and expectNoneLeft found nothing to judge (CI, a loaded machine).
 */
export async function commandRunsBelow(pid: number, command: string, gone: () => boolean, seen?: ReadonlyMap<number, string>): Promise<void> {
  const running = (): boolean =>
    descendantsOf(pid).some((child) => {
      const line = commandLineOf(child).replace(/\0/g, " ").trim();
      return line === command || line.endsWith(`/${command}`);
    });
  const watched = (): boolean => seen === undefined || [...seen.values()].some((line) => line.includes(command));
  while (!(running() && watched()) && !gone()) await new Promise((resolve) => setTimeout(resolve, 20));
}
