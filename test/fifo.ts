// A FIFO as a gate a test holds tacit at: tacit (or a command it runs) opens it to read and waits
// there until the test, having done what it must meanwhile, writes to it and closes it.

import { constants, openSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Waits until a process opens the FIFO to read (its open returns once a writer opens it), and
 * returns the writer's descriptor: the reader then waits in read() until that is closed.
 */
export async function openedToRead(fifo: string): Promise<number> {
  for (let i = 0; i < 6000; i++) {
    try {
      return openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENXIO") throw error;
      await sleep(10);
    }
  }
  throw new Error(`nothing opened ${fifo} to read`);
}
