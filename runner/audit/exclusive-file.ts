// Creating a small file only if it does not exist, whole or not at all: written to a private
// temporary name first, then hard-linked into place (link() fails if the name is taken, and
// never replaces what another process put there, as rename() would). Used for the signing
// key and the audit log's lock, which other processes may read at any moment.

import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, linkSync, openSync, unlinkSync, writeSync } from "node:fs";

/**
 * True if this call created `file` with `content` (mode 0600); false if it already existed.
 * `durable`: the content is fsynced before the file is linked into place.
 */
export function createExclusive(file: string, content: string, { durable = true }: { durable?: boolean } = {}): boolean {
  const temp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  writeNew(temp, content, durable);
  try {
    linkSync(temp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    // A file system without hard links: an exclusive create still never replaces anything,
    // though a reader may see the file before its content.
    try {
      writeNew(file, content, durable);
      return true;
    } catch (fallbackError) {
      if ((fallbackError as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw fallbackError;
    }
  } finally {
    unlinkSync(temp);
  }
}

function writeNew(file: string, content: string, durable: boolean): void {
  const fd = openSync(file, "wx", 0o600);
  try {
    const bytes = Buffer.from(content, "utf8");
    for (let offset = 0; offset < bytes.length; ) offset += writeSync(fd, bytes, offset);
    if (durable) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
