/**
 * The accounting of a bounded on-disk queue, shared by the result spool (spool.ts) and the artifact
 * queue (artifacts/queue.ts): entries oldest first, the bytes they hold against `maxBytes`, the next
 * sequence number and how many entries were lost. The disk is the truth; this is its summary. Every
 * change goes through `serial`, one at a time, so concurrent adds keep their order and the bound holds.
 */
import { open, unlink } from 'node:fs/promises';

export class SpoolLedger<E extends { seq: number }> {
  readonly maxBytes: number;
  readonly #sizeOf: (entry: E) => number;
  /** Oldest first. */
  readonly #entries: E[] = [];
  #bytes = 0;
  #nextSeq = 1;
  #dropped = 0;
  #chain: Promise<unknown> = Promise.resolve();

  constructor(maxBytes: number, sizeOf: (entry: E) => number) {
    this.maxBytes = maxBytes;
    this.#sizeOf = sizeOf;
  }

  /** Entries held. */
  get size(): number {
    return this.#entries.length;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** Entries lost since this process started. */
  get droppedTotal(): number {
    return this.#dropped;
  }

  /** The entry `i`-th from the oldest. */
  at(i: number): E | undefined {
    return this.#entries[i];
  }

  has(seq: number): boolean {
    return this.#entries.some((e) => e.seq === seq);
  }

  /** A fresh sequence number, after every one seen. */
  nextSeq(): number {
    return this.#nextSeq++;
  }

  /** Continues numbering after `seq`, the highest found on disk. */
  resumeAfter(seq: number): void {
    this.#nextSeq = seq + 1;
  }

  push(entry: E): void {
    this.#entries.push(entry);
    this.#bytes += this.#sizeOf(entry);
  }

  /** Takes the entry out of the accounting; undefined when it is not there (already removed). */
  remove(seq: number): E | undefined {
    const i = this.#entries.findIndex((e) => e.seq === seq);
    if (i === -1) return undefined;
    const [entry] = this.#entries.splice(i, 1) as [E];
    this.#bytes -= this.#sizeOf(entry);
    return entry;
  }

  /** Counts one entry lost; returns the new total (for the log line that says so). */
  countDrop(): number {
    this.#dropped += 1;
    return this.#dropped;
  }

  /** Hands the oldest entries to `drop` (which must remove them) until `incoming` more bytes fit. */
  async makeRoom(incoming: number, drop: (oldest: E) => Promise<void>): Promise<void> {
    while (this.#entries.length > 0 && this.#bytes + incoming > this.maxBytes) await drop(this.#entries[0] as E);
  }

  /** Runs `fn` after every change asked for before it. */
  serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(fn, fn);
    this.#chain = run.catch(() => {});
    return run;
  }
}

/** Writes a whole file and fsyncs it, so a later rename never exposes half of it. */
export async function writeFileSynced(file: string, data: string | Uint8Array, flags = 'w'): Promise<void> {
  const fh = await open(file, flags, 0o600);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Removes a file; one already gone is fine. */
export async function unlinkIfPresent(file: string): Promise<void> {
  await unlink(file).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}
