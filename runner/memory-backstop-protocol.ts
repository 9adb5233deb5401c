// What tacit serve's main thread and its memory watch thread (memory-backstop.ts,
// memory-backstop-worker.ts) tell each other, and how each reads the other's messages.

import { readStatFields } from "./proc-stat.js";

/** A slot's value while nothing has happened; the main thread stores SLOT_ENDED once it has seen the end; any other value is the watch's `code`, stored by the kill. */
export const SLOT_WATCHED = 0;
export const SLOT_ENDED = -1;

export interface BackstopWatch {
  kind: "watch";
  /** The sandbox's number (see MemoryBackstop): a later watch of the same one replaces this. */
  id: number;
  /** The process tacit spawned, and its start time (/proc/PID/stat field 22): the pid is the sandbox's only while both match. */
  spawned: number;
  startTime: number;
  /** Whether `spawned` forks the program in a PID namespace (see namespaced-program.ts). */
  forksInit: boolean;
  limitKb: number;
  intervalMs: number;
  /** What the kill stores in the slot (positive): how the main thread says why. */
  code: number;
  /** An Int32Array of one over it: see SLOT_WATCHED. */
  slot: SharedArrayBuffer;
}

export interface BackstopUnwatch {
  kind: "unwatch";
  id: number;
}

export type BackstopRequest = BackstopWatch | BackstopUnwatch;

export interface BackstopKilled {
  kind: "killed";
  id: number;
}

const isInt = (value: unknown): value is number => Number.isSafeInteger(value);

/** The request in `message`, or null: checked field by field, nothing else is acted on. */
export function backstopRequest(message: unknown): BackstopRequest | null {
  if (typeof message !== "object" || message === null) return null;
  const m = message as Record<string, unknown>;
  if (m.kind === "unwatch") return isInt(m.id) ? { kind: "unwatch", id: m.id } : null;
  if (m.kind !== "watch") return null;
  const { id, spawned, startTime, forksInit, limitKb, intervalMs, code, slot } = m;
  if (!isInt(id) || !isInt(spawned) || spawned <= 0 || !isInt(startTime) || typeof forksInit !== "boolean") return null;
  if (!isInt(limitKb) || limitKb <= 0 || !isInt(intervalMs) || intervalMs <= 0 || !isInt(code) || code <= 0) return null;
  if (!(slot instanceof SharedArrayBuffer) || slot.byteLength < 4) return null;
  return { kind: "watch", id, spawned, startTime, forksInit, limitKb, intervalMs, code, slot };
}

/** The start time of `pid` (clock ticks after boot), or null once it is gone. */
export function startTimeOf(pid: number): number | null {
  const start = readStatFields(`/proc/${pid}/stat`)?.(22);
  return start === undefined || !Number.isSafeInteger(start) ? null : start;
}
