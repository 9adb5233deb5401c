// The secure output sink: the one place classified plaintext may be written for a person to
// read. An append-only file, created owner-only (0600) in the same open() that creates it,
// so it is never briefly readable by others; an existing file keeps its permissions.

import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import path from "node:path";

export class SecureSink {
  private fd: number | null = null;
  private chain: Promise<void> = Promise.resolve();

  constructor(readonly file: string) {}

  private open(): number {
    if (this.fd === null) {
      mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
      this.fd = openSync(this.file, "a", 0o600);
    }
    return this.fd;
  }

  /** Appends text once `text` resolves; appends happen in call order. */
  append(text: string | Promise<string>): void {
    this.chain = this.chain.then(async () => {
      const bytes = Buffer.from(await text, "utf8");
      const fd = this.open();
      for (let offset = 0; offset < bytes.length; ) offset += writeSync(fd, bytes, offset);
    });
    this.chain.catch(() => undefined);
  }

  /** Resolves when everything appended so far is written. */
  async flush(): Promise<void> {
    await this.chain;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
