/**
 * Artifacts waiting for upload, on disk beside the result spool (`${SPOOL_DIR}/artifacts/`), so an
 * outage or a restart loses none of them. Each entry is two files named by a zero-padded sequence
 * number: `<seq>.data` (the agent's own copy of the bytes, already scrubbed) and `<seq>.json` (what
 * it is). The data file is complete before the JSON is renamed into place, and the JSON is what
 * makes an entry exist, so a crash mid-add leaves only leftovers that open() removes.
 *
 * Bounded like the result spool: past `maxBytes` the OLDEST entries are dropped, each logged at
 * error level and counted in `droppedTotal`.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { ArtifactRef } from '../../shared/artifacts.ts';

export interface QueuedArtifact extends ArtifactRef {
  seq: number;
  runId: string;
  queuedAt: string;
}

const META = /^(\d{16})\.json$/;
const DATA = /^(\d{16})\.data$/;
const TMP_SUFFIX = '.tmp';

function base(seq: number): string {
  return String(seq).padStart(16, '0');
}

export class ArtifactQueue {
  readonly dir: string;
  readonly maxBytes: number;
  readonly #log: Logger;
  /** Oldest first. */
  readonly #entries: QueuedArtifact[] = [];
  #bytes = 0;
  #nextSeq = 1;
  #dropped = 0;
  /** Serialises every change so the bound holds under concurrent adds. */
  #chain: Promise<unknown> = Promise.resolve();

  private constructor(dir: string, maxBytes: number, log: Logger) {
    this.dir = dir;
    this.maxBytes = maxBytes;
    this.#log = log;
  }

  static async open(options: { dir: string; maxBytes: number; log: Logger }): Promise<ArtifactQueue> {
    const q = new ArtifactQueue(options.dir, options.maxBytes, options.log);
    await mkdir(options.dir, { recursive: true });
    const names = new Set(await readdir(options.dir));
    const seqs: number[] = [];
    for (const name of names) {
      const meta = META.exec(name);
      const data = DATA.exec(name);
      if (name.endsWith(TMP_SUFFIX)) {
        await unlink(path.join(options.dir, name)).catch(() => {});
      } else if (meta?.[1] && names.has(`${meta[1]}.data`)) {
        seqs.push(Number(meta[1]));
      } else if ((meta?.[1] && !names.has(`${meta[1]}.data`)) || (data?.[1] && !names.has(`${data[1]}.json`))) {
        // Half an entry: a crash between the two renames, or a file removed by hand.
        await unlink(path.join(options.dir, name)).catch(() => {});
      }
    }
    seqs.sort((a, b) => a - b);
    for (const seq of seqs) {
      try {
        const entry = JSON.parse(await readFile(path.join(options.dir, `${base(seq)}.json`), 'utf8')) as QueuedArtifact;
        entry.seq = seq;
        q.#entries.push(entry);
        q.#bytes += entry.size;
      } catch (err) {
        options.log.error({ err, seq }, 'ARTIFACT DROPPED: unreadable queue entry removed');
        q.#dropped += 1;
        await q.#unlinkEntry(seq);
      }
    }
    q.#nextSeq = (seqs.at(-1) ?? 0) + 1;
    if (q.#entries.length > 0) {
      options.log.info({ artifacts: q.#entries.length, bytes: q.#bytes }, 'found artifacts waiting for upload');
    }
    return q;
  }

  get size(): number {
    return this.#entries.length;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** Entries dropped since start: the bound, or unreadable leftovers. */
  get droppedTotal(): number {
    return this.#dropped;
  }

  /** A fresh path inside the queue directory to write a copy to before add(). */
  tempPath(): string {
    return path.join(this.dir, `.${Date.now()}-${randomBytes(6).toString('hex')}${TMP_SUFFIX}`);
  }

  dataPath(seq: number): string {
    return path.join(this.dir, `${base(seq)}.data`);
  }

  /** Takes a complete temp file written by the caller (from tempPath) into the queue. */
  add(tempFile: string, meta: Omit<QueuedArtifact, 'seq' | 'queuedAt'>): Promise<QueuedArtifact> {
    return this.#serial(async () => {
      while (this.#entries.length > 0 && this.#bytes + meta.size > this.maxBytes) {
        const oldest = this.#entries[0] as QueuedArtifact;
        await this.#removeEntry(oldest.seq);
        this.#dropped += 1;
        this.#log.error(
          {
            runId: oldest.runId,
            name: oldest.name,
            size: oldest.size,
            maxBytes: this.maxBytes,
            droppedTotal: this.#dropped,
          },
          'ARTIFACT DROPPED: the artifact queue is full (ARTIFACT_QUEUE_MAX_BYTES); the oldest waiting artifact was deleted',
        );
      }
      const entry: QueuedArtifact = { ...meta, seq: this.#nextSeq++, queuedAt: new Date().toISOString() };
      await rename(tempFile, this.dataPath(entry.seq));
      const tmpMeta = this.tempPath();
      const fh = await open(tmpMeta, 'w', 0o600);
      try {
        await fh.writeFile(JSON.stringify(entry));
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmpMeta, path.join(this.dir, `${base(entry.seq)}.json`));
      this.#entries.push(entry);
      this.#bytes += entry.size;
      return entry;
    });
  }

  /** The oldest entry, or undefined. */
  peek(): QueuedArtifact | undefined {
    return this.#entries[0];
  }

  /** Whether an entry is still queued (it may have been dropped for the bound while uploading). */
  has(seq: number): boolean {
    return this.#entries.some((e) => e.seq === seq);
  }

  /** Removes an entry: uploaded, or refused for good. */
  remove(seq: number): Promise<void> {
    return this.#serial(() => this.#removeEntry(seq));
  }

  /** Checks the data file is still there with its size (someone may have cleaned the disk). */
  async intact(entry: QueuedArtifact): Promise<boolean> {
    try {
      return (await stat(this.dataPath(entry.seq))).size === entry.size;
    } catch {
      return false;
    }
  }

  async #removeEntry(seq: number): Promise<void> {
    const i = this.#entries.findIndex((e) => e.seq === seq);
    if (i === -1) return;
    const [entry] = this.#entries.splice(i, 1);
    this.#bytes -= entry?.size ?? 0;
    await this.#unlinkEntry(seq);
  }

  async #unlinkEntry(seq: number): Promise<void> {
    // The JSON first: without it the entry no longer exists, even if the data unlink is cut short.
    for (const file of [`${base(seq)}.json`, `${base(seq)}.data`]) {
      await unlink(path.join(this.dir, file)).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
    }
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(fn, fn);
    this.#chain = run.catch(() => {});
    return run;
  }
}
