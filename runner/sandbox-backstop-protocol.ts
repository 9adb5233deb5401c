// What tacit serve's main thread and its sandbox watch thread (sandbox-backstop.ts,
// sandbox-backstop-worker.ts) tell each other, and how each reads the other's messages and the
// slot they share for each sandbox.

import { readStatFields } from "./proc-stat.js";

/** A slot's state while nothing has happened; the main thread stores SLOT_ENDED once it has seen the end; any other value is the watch's `code` or `timeCode`, stored by the kill. */
export const SLOT_WATCHED = 0;
export const SLOT_ENDED = -1;

/** The slot's deadline while none runs: before the time limit starts, while it is paused (a person is asked), and once it is stopped. */
export const NO_DEADLINE = 0n;

/**
 * How long past a sandbox's deadline the thread waits before it kills it: the main thread's timer
 * is due at the deadline and says why (the end a client sees is its own), so the thread kills only
 * a sandbox the main thread has been too busy to end.
 */
export const TIME_LIMIT_GRACE_MS = 250;

/**
 * How long the process spawned may take to reap its killed program in a PID namespace and end
 * before it is killed too: after the main thread's kill (sandbox-process.ts) and the thread's alike.
 */
export const SPAWNED_KILL_GRACE_MS = 1000;

/** Bytes of a slot: its state (Int32 at byte 0) and its deadline (BigInt64 at byte 8). */
const SLOT_BYTES = 16;
const DEADLINE_OFFSET = 8;

/**
 * One sandbox's slot, as each thread reads it. `state`: see SLOT_WATCHED. `deadline`: when the
 * sandbox's time limit is due, in whole milliseconds of monotonic.ts's clock (the process's
 * CLOCK_MONOTONIC, the same in every thread), or NO_DEADLINE; stored by the main thread as the
 * limit starts, pauses, resumes and stops.
 */
export interface BackstopSlot {
  buffer: SharedArrayBuffer;
  state: Int32Array;
  deadline: BigInt64Array;
}

export function newBackstopSlot(): BackstopSlot {
  return slotOver(new SharedArrayBuffer(SLOT_BYTES));
}

/** The views over `buffer` (at least SLOT_BYTES long: see backstopRequest). */
export function slotOver(buffer: SharedArrayBuffer): BackstopSlot {
  return { buffer, state: new Int32Array(buffer, 0, 1), deadline: new BigInt64Array(buffer, DEADLINE_OFFSET, 1) };
}

/** `atMs` (monotonicMs()) as a slot's deadline, rounded up: never due before the main thread's timer. */
export function deadlineAt(atMs: number | null): bigint {
  return atMs === null ? NO_DEADLINE : BigInt(Math.max(1, Math.ceil(atMs)));
}

export interface BackstopWatch {
  kind: "watch";
  /** The sandbox's number (see SandboxBackstop): a later watch of the same one replaces this. */
  id: number;
  /** The process tacit spawned, and its start time (/proc/PID/stat field 22): the pid is the sandbox's only while both match. */
  spawned: number;
  startTime: number;
  /** Whether `spawned` forks the program in a PID namespace (see namespaced-program.ts). */
  forksInit: boolean;
  limitKb: number;
  intervalMs: number;
  /** What a kill for memory stores in the slot (positive): how the main thread says why. */
  code: number;
  /** What a kill for time (the slot's deadline passed by TIME_LIMIT_GRACE_MS) stores in the slot (positive, not `code`). */
  timeCode: number;
  /** The slot's buffer: see BackstopSlot. */
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
  const { id, spawned, startTime, forksInit, limitKb, intervalMs, code, timeCode, slot } = m;
  if (!isInt(id) || !isInt(spawned) || spawned <= 0 || !isInt(startTime) || typeof forksInit !== "boolean") return null;
  if (!isInt(limitKb) || limitKb <= 0 || !isInt(intervalMs) || intervalMs <= 0) return null;
  if (!isInt(code) || code <= 0 || !isInt(timeCode) || timeCode <= 0 || timeCode === code) return null;
  if (!(slot instanceof SharedArrayBuffer) || slot.byteLength < SLOT_BYTES) return null;
  return { kind: "watch", id, spawned, startTime, forksInit, limitKb, intervalMs, code, timeCode, slot };
}

/** The start time of `pid` (clock ticks after boot), or null once it is gone. */
export function startTimeOf(pid: number): number | null {
  const start = readStatFields(`/proc/${pid}/stat`)?.(22);
  return start === undefined || !Number.isSafeInteger(start) ? null : start;
}
