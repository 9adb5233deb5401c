// What joins a recursive search's walking thread to its helper thread (see shared-search.ts):
// kept apart, with no imports, so that the host can make the link without loading the search.

import type { MessagePort } from "node:worker_threads";

/** The two ends of the link: a message port each and the same shared control words. */
export interface HelperLink {
  port: MessagePort;
  control: SharedArrayBuffer;
}

/** The control words' size: the batch's state and the next file to take, two Int32s. */
export const CONTROL_BYTES = 8;
