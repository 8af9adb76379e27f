import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { SubmitResultRequest } from '../shared/protocol.ts';
import { SpoolLedger, unlinkIfPresent, writeFileSynced } from './spool-ledger.ts';
import type { Log } from '../shared/log.ts';

/**
 * A bounded on-disk FIFO of results the service could not take yet.
 *
 * One file per result, named by a zero-padded, monotonically increasing sequence number, so the
 * directory listing sorted by name is the delivery order, and a restart resumes after the highest
 * number present. Each file is written to a temporary name, fsynced and renamed: a crash leaves
 * either the whole result or a `.tmp` file (removed at open), never half a result under a real name.
 *
 * When the bytes on disk would pass `maxBytes`, the OLDEST results are dropped: in an outage the
 * newest state of each check is worth more than results from long ago, and the disk must not fill.
 * Every drop, and every unreadable file removed, is logged at error level and counted in `droppedTotal`.
 */
export interface SpoolEntry {
  seq: number;
  item: SubmitResultRequest;
}

export interface ResultSpoolOptions {
  dir: string;
  maxBytes: number;
  log: Log;
}

const NAME = /^(\d{16})\.json$/;
const TMP_SUFFIX = '.tmp';

interface IndexEntry {
  seq: number;
  bytes: number;
  runId: string | undefined;
}

function fileName(seq: number): string {
  return `${String(seq).padStart(16, '0')}.json`;
}

/** A spooled file's result; throws for anything else (a truncated file, or JSON of another shape). */
function parseSpooled(text: string): SubmitResultRequest {
  const item = JSON.parse(text) as Partial<SubmitResultRequest> | null;
  if (typeof item?.result?.runId !== 'string' || typeof item.leaseId !== 'string') {
    throw new Error('the file is JSON but not a spooled result (no result.runId or leaseId)');
  }
  return item as SubmitResultRequest;
}

/** Emits 'empty' when the last result leaves (delivered, refused or dropped). */
export class ResultSpool extends EventEmitter<{ empty: [] }> {
  readonly dir: string;
  readonly maxBytes: number;
  readonly #log: Log;
  /** Every disk mutation goes through its `serial`. */
  readonly #index: SpoolLedger<IndexEntry>;

  private constructor(options: ResultSpoolOptions) {
    super();
    this.dir = options.dir;
    this.maxBytes = options.maxBytes;
    this.#log = options.log;
    this.#index = new SpoolLedger(options.maxBytes, (e) => e.bytes);
  }

  /** Opens (creating) the directory, removes leftovers of interrupted writes and indexes what is there. */
  static async open(options: ResultSpoolOptions): Promise<ResultSpool> {
    const spool = new ResultSpool(options);
    await mkdir(options.dir, { recursive: true });
    const names = await readdir(options.dir);
    const seqs: number[] = [];
    for (const name of names) {
      if (name.endsWith(TMP_SUFFIX)) {
        // A write that never reached its rename: the result was not acknowledged as spooled.
        await unlink(path.join(options.dir, name)).catch(() => {});
        continue;
      }
      const m = NAME.exec(name);
      if (m?.[1]) seqs.push(Number(m[1]));
    }
    seqs.sort((a, b) => a - b);
    for (const seq of seqs) {
      const st = await stat(path.join(options.dir, fileName(seq)));
      spool.#index.push({ seq, bytes: st.size, runId: undefined });
    }
    spool.#index.resumeAfter(seqs.at(-1) ?? 0);
    if (seqs.length > 0) {
      options.log.info({ spooled: seqs.length, bytes: spool.#index.bytes }, 'found undelivered results in the spool');
    }
    return spool;
  }

  /** Results waiting on disk. */
  get size(): number {
    return this.#index.size;
  }

  get bytes(): number {
    return this.#index.bytes;
  }

  /** Results lost since this process started: dropped to keep within maxBytes, or unreadable. */
  get droppedTotal(): number {
    return this.#index.droppedTotal;
  }

  append(item: SubmitResultRequest): Promise<number> {
    return this.#index.serial(() => this.#append(item));
  }

  /** The oldest result, without removing it. */
  async peek(): Promise<SpoolEntry | undefined> {
    return (await this.peekMany(1))[0];
  }

  /** Up to `n` of the oldest results, oldest first, without removing them. */
  peekMany(n: number): Promise<SpoolEntry[]> {
    return this.#index.serial(async () => {
      const out: SpoolEntry[] = [];
      let i = 0;
      while (out.length < n && i < this.#index.size) {
        const { seq } = this.#index.at(i) as IndexEntry;
        const item = await this.#read(seq);
        // An unreadable file left the index, so the same position now holds the next entry.
        if (item) {
          out.push({ seq, item });
          i++;
        }
      }
      return out;
    });
  }

  /** Removes an entry once the service has it. Missing entries (dropped meanwhile) are fine. */
  ack(seq: number): Promise<void> {
    return this.#index.serial(() => this.#remove(seq));
  }

  /** Yields entries oldest first; the caller acks each one it delivered before asking for the next. */
  async *entries(): AsyncGenerator<SpoolEntry> {
    let last = 0;
    for (;;) {
      const entry = await this.peek();
      // The caller did not ack the last one: stop instead of handing it out again forever.
      if (!entry || entry.seq === last) return;
      last = entry.seq;
      yield entry;
    }
  }

  async #append(item: SubmitResultRequest): Promise<number> {
    const data = Buffer.from(JSON.stringify(item));
    const runId = item.result.runId;
    if (data.length > this.maxBytes) {
      this.#log.error(
        { runId, bytes: data.length, maxBytes: this.maxBytes, droppedTotal: this.#index.countDrop() },
        'RESULT DROPPED: a single result is larger than SPOOL_MAX_BYTES, it cannot be spooled',
      );
      return 0;
    }
    await this.#index.makeRoom(data.length, (oldest) => this.#dropOldest(oldest));
    const seq = this.#index.nextSeq();
    const final = path.join(this.dir, fileName(seq));
    const tmp = path.join(this.dir, `.${fileName(seq)}.${randomBytes(4).toString('hex')}${TMP_SUFFIX}`);
    await writeFileSynced(tmp, data);
    await rename(tmp, final);
    await this.#syncDir();
    this.#index.push({ seq, bytes: data.length, runId });
    return seq;
  }

  /** A spooled result; an unreadable file (deleted or truncated by hand) is removed and counted instead. */
  async #read(seq: number): Promise<SubmitResultRequest | undefined> {
    try {
      return parseSpooled(await readFile(path.join(this.dir, fileName(seq)), 'utf8'));
    } catch (err) {
      await this.#remove(seq);
      // Removed unread, the result is lost as surely as one dropped for the bound: count it.
      const droppedTotal = this.#index.countDrop();
      this.#log.error({ err, seq, droppedTotal }, 'RESULT DROPPED: unreadable spooled result removed');
      return undefined;
    }
  }

  async #dropOldest(head: IndexEntry): Promise<void> {
    let runId = head.runId;
    if (runId === undefined) {
      try {
        runId = (JSON.parse(await readFile(path.join(this.dir, fileName(head.seq)), 'utf8')) as SubmitResultRequest)
          .result.runId;
      } catch {
        runId = 'unknown';
      }
    }
    await this.#remove(head.seq);
    this.#log.error(
      { runId, seq: head.seq, maxBytes: this.maxBytes, droppedTotal: this.#index.countDrop() },
      'RESULT DROPPED: the spool is full (SPOOL_MAX_BYTES); the oldest undelivered result was deleted',
    );
  }

  async #remove(seq: number): Promise<void> {
    if (!this.#index.remove(seq)) return;
    await unlinkIfPresent(path.join(this.dir, fileName(seq)));
    if (this.#index.size === 0) this.emit('empty');
  }

  /** fsync the directory so the rename itself survives a power cut (best effort: not on every OS). */
  async #syncDir(): Promise<void> {
    try {
      const dh = await open(this.dir, 'r');
      try {
        await dh.sync();
      } finally {
        await dh.close();
      }
    } catch {
      // Some platforms cannot fsync a directory; the file itself is already synced.
    }
  }
}
