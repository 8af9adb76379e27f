/**
 * The agent's artifact uploader. Runners hand it files (`add`); it takes a copy into the on-disk
 * queue (scrubbing text on the way and hashing as it copies), and one worker uploads the queue
 * oldest first, streaming from disk, resuming at the service's offset after a broken connection,
 * retrying with jittered backoff through outages, and surviving restarts because the queue is on
 * disk. An artifact over ARTIFACT_MAX_BYTES is never queued: the caller gets a note for the result
 * instead, and the check's verdict is not touched.
 *
 * Events: 'queued' (QueuedArtifact), 'uploaded' ({runId, name, size}), 'dropped' ({runId, name,
 * reason}), 'attempt-failed' ({runId, name, error}).
 */
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { constants, createReadStream, createWriteStream } from 'node:fs';
import { copyFile, type FileHandle, open, stat, unlink } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import {
  ARTIFACT_KINDS,
  ARTIFACT_NAME_RULE,
  type ArtifactKind,
  type ArtifactNote,
  type ArtifactRef,
  type ArtifactUploadStatus,
  isSafeArtifactName,
} from '../../shared/artifacts.ts';
import { Backoff, type BackoffOptions, DELIVERY_BACKOFF, sleep } from '../backoff.ts';
import { PermanentError, retryHintOf } from '../client.ts';
import type { ArtifactUploaderConfig } from './config.ts';
import { type ArtifactHttp, DigestMismatchError } from './http.ts';
import { SegmentSizer } from './segment-sizer.ts';
import { ArtifactQueue, type QueuedArtifact } from './queue.ts';
import { isTextArtifact, LineScrubber, type ScrubSource, scrubTextArtifact } from './scrub.ts';
import type { Log } from '../../shared/log.ts';

/** What a runner says about a file it produced. */
export interface ArtifactSpec {
  name: string;
  kind: ArtifactKind;
  /** The file on disk; the uploader copies it, so the runner may delete it afterwards. */
  path: string;
  contentType?: string;
  /** The job's secrets for scrubbing a text artifact (its Scrubber or check); see scrub.ts. */
  scrubber?: ScrubSource;
}

export type ArtifactAddResult = { ok: true; ref: ArtifactRef } | { ok: false; note: ArtifactNote };

export interface ArtifactUploaderOptions {
  config: ArtifactUploaderConfig;
  http: Pick<ArtifactHttp, 'status' | 'start' | 'append'>;
  log: Log;
  backoff?: BackoffOptions;
  /**
   * Each request is sized to carry about half this much time of data at the rate the previous one
   * achieved (./segment-sizer.ts), then the upload continues with PATCH. The service's HTTP server
   * ends any request after JOB_LEASE_MAX_WAIT_SECONDS + 30 s (slow-client protection), which a
   * 150 MB body over a slow uplink would pass.
   */
  segmentMs?: number;
  /** Bytes read from disk per chunk. */
  chunkBytes?: number;
}

/** Attempts after a SHA-256 mismatch before the artifact is given up (the file itself is broken). */
const MAX_DIGEST_RESTARTS = 2;

/** Buffers an upload cycles through (see #segment): one held by undici, the rest being read ahead. */
const RING_SLOTS = 4;

/** Bytes per read and per socket write: few enough calls per upload, and 4 of them stay small. */
const CHUNK_BYTES = 1024 * 1024;

export class ArtifactUploader extends EventEmitter {
  readonly #config: ArtifactUploaderConfig;
  readonly #http: Pick<ArtifactHttp, 'status' | 'start' | 'append'>;
  readonly #log: Log;
  readonly #backoff: Backoff;
  readonly #segmentMs: number;
  readonly #chunkBytes: number;
  readonly queue: ArtifactQueue;
  readonly #abort = new AbortController();
  #worker: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #uploaded = 0;
  #refused = 0;
  #failedAttempts = 0;

  private constructor(options: ArtifactUploaderOptions, queue: ArtifactQueue) {
    super();
    this.#config = options.config;
    this.#http = options.http;
    this.#log = options.log;
    this.#backoff = new Backoff(options.backoff ?? DELIVERY_BACKOFF);
    this.#segmentMs = options.segmentMs ?? 20_000;
    this.#chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
    this.queue = queue;
  }

  /** Opens the queue directory (finding what an earlier process left) and starts uploading. */
  static async open(options: ArtifactUploaderOptions): Promise<ArtifactUploader> {
    const queue = await ArtifactQueue.open({
      dir: options.config.queueDir,
      maxBytes: options.config.queueMaxBytes,
      log: options.log,
    });
    const uploader = new ArtifactUploader(options, queue);
    uploader.#worker = uploader
      .#run()
      .catch((err: unknown) => options.log.error({ err }, 'artifact uploader stopped unexpectedly'));
    return uploader;
  }

  get uploadedTotal(): number {
    return this.#uploaded;
  }

  /** Artifacts lost for good: dropped for the queue bound, or refused by the service. */
  get droppedTotal(): number {
    return this.queue.droppedTotal + this.#refused;
  }

  get failedAttemptsTotal(): number {
    return this.#failedAttempts;
  }

  /** A collector for one run: runners call add(), the result takes details(). */
  forRun(runId: string, scrubber?: ScrubSource): RunArtifacts {
    return new RunArtifacts(this, runId, scrubber);
  }

  /**
   * Queues a file for upload as an artifact of `runId`. Never throws for a bad artifact: the answer
   * is either the reference the result carries or a note saying why it was left out.
   */
  async add(runId: string, spec: ArtifactSpec): Promise<ArtifactAddResult> {
    const kind = spec.kind;
    const contentType = spec.contentType ?? 'application/octet-stream';
    const leaveOut = (message: string, size?: number): ArtifactAddResult => {
      this.#log.warn({ runId, artifact: spec.name, kind, size, reason: message }, 'artifact left out of the result');
      return { ok: false, note: { name: spec.name, kind, ...(size === undefined ? {} : { size }), message } };
    };
    if (!isSafeArtifactName(spec.name)) return leaveOut(`left out: the name is not allowed; use ${ARTIFACT_NAME_RULE}`);
    if (!(ARTIFACT_KINDS as readonly string[]).includes(kind))
      return leaveOut(`left out: kind must be one of ${ARTIFACT_KINDS.join(', ')}`);
    let size: number;
    try {
      const st = await stat(spec.path);
      if (!st.isFile()) return leaveOut('left out: the path is not a file');
      size = st.size;
    } catch (err) {
      return leaveOut(
        `left out: the file cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
    const max = this.#config.maxBytes;
    const overCap = (n: number) =>
      leaveOut(
        `left out: ${n} bytes is over the artifact size limit of ${max} bytes (ARTIFACT_MAX_BYTES); the check's verdict is unaffected`,
        n,
      );
    if (size > max) return overCap(size);

    // The copy is the agent's own: the runner may delete its temp folder while we wait on the
    // service.
    const temp = this.queue.tempPath();
    let copied: number;
    let sha256: string;
    try {
      if (isTextArtifact(contentType, kind)) {
        // Text is scrubbed on the way in: the copy is what leaves the agent.
        const scrub = (line: string) => scrubTextArtifact(line, spec.scrubber);
        await pipeline(createReadStream(spec.path), new LineScrubber(scrub), createWriteStream(temp, { mode: 0o600 }));
      } else {
        // A kernel-side copy (a reflink where the filesystem can): no bytes pass through the heap.
        await copyFile(spec.path, temp, constants.COPYFILE_FICLONE);
      }
      ({ size: copied, sha256 } = await hashFile(temp));
    } catch (err) {
      await unlink(temp).catch(() => {});
      return leaveOut(`left out: copying it for upload failed (${(err as Error).message})`);
    }
    // Scrubbing can change the size a little either way.
    if (copied > max) {
      await unlink(temp).catch(() => {});
      return overCap(copied);
    }
    const ref: ArtifactRef = { name: spec.name, kind, contentType, size: copied, sha256 };
    const entry = await this.queue.add(temp, { ...ref, runId });
    this.#log.debug(
      { runId, artifact: ref.name, size: ref.size, queued: this.queue.size },
      'artifact queued for upload',
    );
    this.emit('queued', entry);
    this.#wake?.();
    return { ok: true, ref };
  }

  /** Resolves once the queue is empty (every artifact uploaded or dropped). */
  async idle(signal?: AbortSignal): Promise<void> {
    while (this.queue.size > 0) {
      if (signal?.aborted) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          this.off('uploaded', done);
          this.off('dropped', done);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        this.on('uploaded', done);
        this.on('dropped', done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  /** Stops the worker; an upload in flight is cut and resumes from the service's offset next start. */
  async close(): Promise<void> {
    this.#abort.abort();
    this.#wake?.();
    await this.#worker;
    if (this.queue.size > 0) {
      this.#log.warn(
        { artifacts: this.queue.size, bytes: this.queue.bytes },
        'artifacts left waiting for upload; they are sent at the next start',
      );
    }
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      const entry = this.queue.peek();
      if (!entry) {
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        this.#wake = undefined;
        continue;
      }
      await this.#deliver(entry, signal);
    }
  }

  /** Uploads one entry to the end, or drops it when the service refuses it for good. */
  async #deliver(entry: QueuedArtifact, signal: AbortSignal): Promise<void> {
    const at = { runId: entry.runId, artifact: entry.name };
    let digestRestarts = 0;
    while (!signal.aborted && this.queue.has(entry.seq)) {
      try {
        if (!(await this.queue.intact(entry))) {
          await this.#drop(entry, 'its queued copy is missing or changed on disk');
          return;
        }
        await this.#send(entry, signal);
        await this.queue.remove(entry.seq);
        this.#uploaded += 1;
        this.#backoff.reset();
        this.#log.info({ ...at, size: entry.size }, 'artifact uploaded');
        this.emit('uploaded', { runId: entry.runId, name: entry.name, size: entry.size });
        return;
      } catch (err) {
        if (signal.aborted) return;
        this.#failedAttempts += 1;
        this.emit('attempt-failed', { runId: entry.runId, name: entry.name, error: err as Error });
        if (err instanceof DigestMismatchError && digestRestarts < MAX_DIGEST_RESTARTS) {
          // The bytes were damaged on the way; the service discarded them. Send them again.
          digestRestarts += 1;
          this.#log.warn({ ...at, err }, 'artifact upload failed its SHA-256 check; sending it again from the start');
          continue;
        }
        if (err instanceof PermanentError) {
          await this.#drop(entry, (err as Error).message);
          return;
        }
        // An unreachable service gets the short cap, as results do: uploads resume within seconds of its return.
        const delay = this.#backoff.next(retryHintOf(err));
        this.#log.warn(
          { ...at, err, reason: (err as Error).message, retryInMs: delay, waiting: this.queue.size },
          'artifact upload failed; will retry',
        );
        await sleep(delay, signal);
      }
    }
  }

  async #drop(entry: QueuedArtifact, reason: string): Promise<void> {
    await this.queue.remove(entry.seq);
    this.#refused += 1;
    this.#log.error(
      { runId: entry.runId, artifact: entry.name, size: entry.size, reason, droppedTotal: this.droppedTotal },
      'ARTIFACT DROPPED: the upload cannot succeed; it is deleted (not retried)',
    );
    this.emit('dropped', { runId: entry.runId, name: entry.name, reason });
  }

  /** One pass: learn the offset, then PUT/PATCH sized requests until complete. Throws on any failure. */
  async #send(entry: QueuedArtifact, signal: AbortSignal): Promise<void> {
    const held = await this.#http.status(entry.runId, entry.name, signal);
    const same = held && held.sha256 === entry.sha256 && held.size === entry.size;
    if (same && held.complete) return;
    const source: Source = {
      fh: await open(this.queue.dataPath(entry.seq), 'r'),
      // One ring for the whole pass: a request's reads have all landed once the service answers it.
      ring: Array.from({ length: RING_SLOTS }, () =>
        Buffer.allocUnsafe(Math.min(this.#chunkBytes, Math.max(1, entry.size))),
      ),
    };
    const sizer = new SegmentSizer(this.#segmentMs, this.#chunkBytes);
    try {
      let status = await this.#request(entry, source, sizer, same ? held.received : undefined, signal);
      while (!status.complete) {
        if (status.received >= entry.size)
          throw new PermanentError(`the service holds all ${entry.size} bytes but did not complete the artifact`, 500);
        status = await this.#request(entry, source, sizer, status.received, signal);
      }
    } finally {
      await source.fh.close();
    }
  }

  /** One request of `sizer`'s size: a PUT from byte 0 when `offset` is undefined, else a PATCH at it. */
  async #request(
    entry: QueuedArtifact,
    source: Source,
    sizer: SegmentSizer,
    offset: number | undefined,
    signal: AbortSignal,
  ): Promise<ArtifactUploadStatus> {
    const start = offset ?? 0;
    const length = sizer.next(entry.size - start);
    const body = { bytes: this.#segment(source, start, start + length), length };
    const began = performance.now();
    const status =
      offset === undefined
        ? await this.#http.start(entry.runId, entry, body, signal)
        : await this.#http.append(entry.runId, entry.name, offset, body, signal);
    sizer.measured(length, performance.now() - began);
    return status;
  }

  /**
   * Bytes [start, end) of the file, a chunk at a time: the body of one request, whose length it declares.
   *
   * Read-ahead: while undici writes one chunk, the next ones are already being read, so the socket
   * never waits on the disk (a read is a thread-pool round trip, slow on a busy machine).
   *
   * Memory: the chunks come from a small ring of buffers that are reused, so an upload allocates
   * nothing per chunk and RSS stays flat (fresh buffers would leave up to V8's external-memory GC
   * threshold, ~64 MB, of garbage behind). Reuse is safe because undici pulls the next chunk only
   * after socket.write() of this one returned true (the kernel took it synchronously) or after
   * 'drain' (everything queued was flushed): so when the generator runs, no yielded buffer is in
   * use any more, and reads go only into slots that are neither yielded nor still being read. The
   * service's SHA-256 check would catch any corruption anyway.
   */
  async *#segment({ fh, ring }: Source, start: number, end: number): AsyncGenerator<Uint8Array> {
    const reads: Array<Promise<Buffer>> = [];
    let slot = 0;
    let position = start;
    const readAhead = () => {
      // One slot stays out of the rotation: the chunk undici holds between two pulls.
      while (reads.length < RING_SLOTS - 1 && position < end) {
        const buffer = ring[slot] as Buffer;
        slot = (slot + 1) % RING_SLOTS;
        const read = readChunk(fh, buffer, position, end);
        // Settled (and awaited) below; this only keeps a failure of a read never awaited from being unhandled.
        read.catch(() => {});
        reads.push(read);
        position += Math.min(buffer.length, end - position);
      }
    };
    try {
      readAhead();
      for (let read = reads.shift(); read; read = reads.shift()) {
        const chunk = await read;
        readAhead();
        yield chunk;
      }
    } finally {
      // Stopped early (the request failed): let reads in flight land before the file closes.
      await Promise.allSettled(reads);
    }
  }
}

/** The queued copy being uploaded, and the buffers (RING_SLOTS) its chunks are read into. */
interface Source {
  fh: FileHandle;
  ring: Buffer[];
}

/** Bytes [position, min(end, position + buffer.length)) of the file into `buffer`; fails on a short file. */
async function readChunk(fh: FileHandle, buffer: Buffer, position: number, end: number): Promise<Buffer> {
  const length = Math.min(buffer.length, end - position);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await fh.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) throw new Error(`the queued copy ended at ${position + filled} of ${end} bytes`);
    filled += bytesRead;
  }
  return length === buffer.length ? buffer : buffer.subarray(0, length);
}

/** SHA-256 and size of a file, read through one reused buffer (flat memory, any size). */
async function hashFile(file: string): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(1024 * 1024);
  const fh = await open(file, 'r');
  let size = 0;
  try {
    for (;;) {
      const { bytesRead } = await fh.read(buffer, 0, buffer.length, size);
      if (bytesRead === 0) break;
      // update() copies into the hash state synchronously, so the buffer is free again at once.
      hash.update(buffer.subarray(0, bytesRead));
      size += bytesRead;
    }
  } finally {
    await fh.close();
  }
  return { size, sha256: hash.digest('hex') };
}

/** The artifacts of one run: what a runner adds, and what its result then says about them. */
export class RunArtifacts {
  readonly runId: string;
  readonly #uploader: Pick<ArtifactUploader, 'add'>;
  readonly #refs: ArtifactRef[] = [];
  readonly #notes: ArtifactNote[] = [];
  readonly #scrubber: ScrubSource | undefined;

  constructor(uploader: Pick<ArtifactUploader, 'add'>, runId: string, scrubber?: ScrubSource) {
    this.#uploader = uploader;
    this.runId = runId;
    this.#scrubber = scrubber;
  }

  async add(spec: ArtifactSpec): Promise<ArtifactAddResult> {
    const result = await this.#uploader.add(this.runId, {
      ...(this.#scrubber ? { scrubber: this.#scrubber } : {}),
      ...spec,
    });
    if (result.ok) this.#refs.push(result.ref);
    else this.#notes.push(result.note);
    return result;
  }

  /** An artifact the runner itself left out (it could not be made safe to send), for the result. */
  note(note: ArtifactNote): void {
    this.#notes.push(note);
  }

  /** `details.artifacts` and `details.artifactNotes` for the run's result (empty when nothing was added). */
  details(): { artifacts?: ArtifactRef[]; artifactNotes?: ArtifactNote[] } {
    return {
      ...(this.#refs.length > 0 ? { artifacts: [...this.#refs] } : {}),
      ...(this.#notes.length > 0 ? { artifactNotes: [...this.#notes] } : {}),
    };
  }
}
