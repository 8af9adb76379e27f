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
import { mkdir, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { ArtifactRef } from '../../shared/artifacts.ts';
import { SpoolLedger, unlinkIfPresent, writeFileSynced } from '../spool-ledger.ts';
import type { Log } from '../../shared/log.ts';

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
  readonly #log: Log;
  /** Every change goes through its `serial`. */
  readonly #entries: SpoolLedger<QueuedArtifact>;

  private constructor(dir: string, maxBytes: number, log: Log) {
    this.dir = dir;
    this.maxBytes = maxBytes;
    this.#log = log;
    this.#entries = new SpoolLedger(maxBytes, (e) => e.size);
  }

  static async open(options: { dir: string; maxBytes: number; log: Log }): Promise<ArtifactQueue> {
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
      } catch (err) {
        options.log.error({ err, seq }, 'ARTIFACT DROPPED: unreadable queue entry removed');
        q.#entries.countDrop();
        await q.#unlinkEntry(seq);
      }
    }
    q.#entries.resumeAfter(seqs.at(-1) ?? 0);
    if (q.#entries.size > 0) {
      options.log.info({ artifacts: q.#entries.size, bytes: q.#entries.bytes }, 'found artifacts waiting for upload');
    }
    return q;
  }

  get size(): number {
    return this.#entries.size;
  }

  get bytes(): number {
    return this.#entries.bytes;
  }

  /** Entries dropped since start: the bound, or unreadable leftovers. */
  get droppedTotal(): number {
    return this.#entries.droppedTotal;
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
    return this.#entries.serial(async () => {
      await this.#entries.makeRoom(meta.size, (oldest) => this.#dropOldest(oldest));
      const entry: QueuedArtifact = { ...meta, seq: this.#entries.nextSeq(), queuedAt: new Date().toISOString() };
      await rename(tempFile, this.dataPath(entry.seq));
      const tmpMeta = this.tempPath();
      await writeFileSynced(tmpMeta, JSON.stringify(entry));
      await rename(tmpMeta, path.join(this.dir, `${base(entry.seq)}.json`));
      this.#entries.push(entry);
      return entry;
    });
  }

  async #dropOldest(oldest: QueuedArtifact): Promise<void> {
    await this.#removeEntry(oldest.seq);
    this.#log.error(
      {
        runId: oldest.runId,
        name: oldest.name,
        size: oldest.size,
        maxBytes: this.maxBytes,
        droppedTotal: this.#entries.countDrop(),
      },
      'ARTIFACT DROPPED: the artifact queue is full (ARTIFACT_QUEUE_MAX_BYTES); the oldest waiting artifact was deleted',
    );
  }

  /** The oldest entry, or undefined. */
  peek(): QueuedArtifact | undefined {
    return this.#entries.at(0);
  }

  /** Whether an entry is still queued (it may have been dropped for the bound while uploading). */
  has(seq: number): boolean {
    return this.#entries.has(seq);
  }

  /** Removes an entry: uploaded, or refused for good. */
  remove(seq: number): Promise<void> {
    return this.#entries.serial(() => this.#removeEntry(seq));
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
    if (this.#entries.remove(seq)) await this.#unlinkEntry(seq);
  }

  async #unlinkEntry(seq: number): Promise<void> {
    // The JSON first: without it the entry no longer exists, even if the data unlink is cut short.
    for (const file of [`${base(seq)}.json`, `${base(seq)}.data`]) {
      await unlinkIfPresent(path.join(this.dir, file));
    }
  }
}
