/**
 * The service side of artifact uploads: checks who may write what, streams bodies into the blob
 * store while hashing them, verifies the declared SHA-256 when the last byte arrives, serves
 * complete artifacts to their account, and deletes them when their retention ends.
 * docs/protocol.md "Artifacts" is the contract; the HTTP routes are thin wrappers around this.
 */
import { createHash, type Hash } from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  ARTIFACT_KINDS,
  ARTIFACT_NAME_RULE,
  type ArtifactKind,
  type ArtifactUploadStatus,
  isSafeArtifactName,
  RUN_ID_PATTERN,
} from '../../shared/artifacts.ts';
import { BadRequestError, ConflictError, HttpError, NotFoundError } from '../http/errors.ts';
import type { ArtifactRecord, RunOwner } from '../store/artifact-types.ts';
import type { PrivateLocation, Store } from '../store/store.ts';
import type { ArtifactConfig } from './config.ts';
import { PartialHashes } from './partial-hashes.ts';
import type { ArtifactBlobStore, ArtifactKey } from './store.ts';
import type { Log } from '../../shared/log.ts';

export interface StartUpload {
  kind: ArtifactKind;
  contentType: string;
  size: number;
  sha256: string;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** 413 with the limit and the setting that governs it. */
export class ArtifactTooLargeError extends HttpError {
  constructor(size: number, maxBytes: number) {
    super(413, `upload-length ${size} is over this service's artifact limit of ${maxBytes} bytes (ARTIFACT_MAX_BYTES)`);
    this.name = 'ArtifactTooLargeError';
  }
}

/** 422: every byte arrived but they do not hash to the declared SHA-256; the upload is discarded. */
export class ArtifactDigestMismatchError extends HttpError {
  constructor(expected: string, actual: string) {
    super(
      422,
      `the artifact's SHA-256 is ${actual}, not the declared ${expected}; the upload was discarded, start it again with PUT`,
    );
    this.name = 'ArtifactDigestMismatchError';
  }
}

/**
 * 413: the body ran past upload-length. The bytes up to it were taken; `outcome` says whether they
 * completed the artifact (then `held` is its size, for the upload-offset header) or were discarded.
 */
export class ArtifactBodyTooLongError extends HttpError {
  readonly held: number | undefined;
  constructor(size: number, outcome: 'complete' | 'discarded') {
    super(
      413,
      outcome === 'complete'
        ? `the body runs past upload-length ${size}: the bytes up to it were kept and match the declared SHA-256, so the artifact is complete; the rest was refused (send at most upload-length bytes in all)`
        : `the body runs past upload-length ${size}, and the bytes up to it do not match the declared SHA-256: the upload was discarded, start it again with PUT`,
    );
    this.name = 'ArtifactBodyTooLongError';
    this.held = outcome === 'complete' ? size : undefined;
  }
}

/**
 * Passes on at most `room` bytes of `body`, hashing them; `overflowed` tells whether more came.
 * Iterated by hand: leaving a for-await early would destroy the request, and with it the socket
 * that must still carry the 413.
 */
function meterBody(body: AsyncIterable<Uint8Array>, room: number, hash: Hash) {
  const meter = { taken: 0, overflowed: false, chunks: take() };
  async function* take(): AsyncGenerator<Uint8Array> {
    const source = body[Symbol.asyncIterator]();
    for (;;) {
      const next = await source.next();
      if (next.done) return;
      const chunk = next.value;
      const fits = Math.min(chunk.byteLength, room - meter.taken);
      const overflows = fits < chunk.byteLength;
      if (fits > 0) {
        const part = overflows ? chunk.subarray(0, fits) : chunk;
        hash.update(part);
        meter.taken += fits;
        yield part;
        // Asked for the next one: the store has copied this one (ArtifactBlobStore.write), so it can go.
        if (!overflows) release(chunk);
      }
      if (overflows) {
        meter.overflowed = true;
        return;
      }
    }
  }
  return meter;
}

/**
 * Frees a request body chunk's memory now rather than at the next full garbage collection. Node hands
 * each piece of a body to JavaScript as a buffer of its own outside V8's heap, and 150 MB of them per
 * upload made V8 run several full collections per upload to find them free (BENCHMARKS.md
 * "Artifact upload"). Detaching (`transfer(0)`) drops the memory and V8's count of it at once. Only a
 * chunk that is its whole ArrayBuffer is released: a view into a shared pool is left to the collector.
 */
function release(chunk: Uint8Array): void {
  const { buffer } = chunk;
  if (buffer instanceof ArrayBuffer && chunk.byteOffset === 0 && chunk.byteLength === buffer.byteLength)
    buffer.transfer(0);
}

/** Parses and checks the headers of a PUT; each failure names the header and what is allowed. */
export function parseStartHeaders(
  headers: Record<string, string | string[] | undefined>,
  maxBytes: number,
): StartUpload {
  const one = (name: string): string | undefined => {
    const v = headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const lengthRaw = one('upload-length');
  if (lengthRaw === undefined || !/^\d{1,16}$/.test(lengthRaw)) {
    throw new BadRequestError("headers/upload-length is required: the artifact's total size in bytes (a whole number)");
  }
  const size = Number(lengthRaw);
  if (size > maxBytes) throw new ArtifactTooLargeError(size, maxBytes);
  const kind = one('x-artifact-kind');
  if (!kind || !(ARTIFACT_KINDS as readonly string[]).includes(kind)) {
    throw new BadRequestError(`headers/x-artifact-kind must be one of ${ARTIFACT_KINDS.join(', ')}`);
  }
  const sha256 = one('x-artifact-sha256')?.toLowerCase();
  if (!sha256 || !SHA256_HEX.test(sha256)) {
    throw new BadRequestError("headers/x-artifact-sha256 must be the artifact's SHA-256 as 64 hexadecimal characters");
  }
  const contentType = (one('content-type') ?? 'application/octet-stream').slice(0, 200);
  return { kind: kind as ArtifactKind, contentType, size, sha256 };
}

export function parseOffsetHeader(headers: Record<string, string | string[] | undefined>): number {
  const v = headers['upload-offset'];
  const raw = Array.isArray(v) ? v[0] : v;
  if (raw === undefined || !/^\d{1,16}$/.test(raw)) {
    throw new BadRequestError('headers/upload-offset is required: where this body starts, in bytes (from HEAD)');
  }
  return Number(raw);
}

/** Changes when a PUT starts the upload over (begin() sets a new createdAt), so an old hash cannot serve it. */
const generationOf = (record: ArtifactRecord): string => `${record.createdAt} ${record.size} ${record.sha256}`;

export function checkUploadParams(runId: string, name: string): void {
  if (!RUN_ID_PATTERN.test(runId)) throw new BadRequestError('params/runId must be a run id (letters, digits and "-")');
  if (!isSafeArtifactName(name)) throw new BadRequestError(`params/name must be ${ARTIFACT_NAME_RULE}`);
}

export interface ArtifactServiceOptions {
  store: Store;
  blobs: ArtifactBlobStore;
  config: ArtifactConfig;
  log: Pick<Log, 'info' | 'warn' | 'error'>;
  now?: () => number;
}

export class ArtifactService {
  readonly #store: Store;
  readonly blobs: ArtifactBlobStore;
  readonly config: ArtifactConfig;
  readonly #log: Pick<Log, 'info' | 'warn' | 'error'>;
  readonly #now: () => number;
  /** One writer per artifact at a time: a second PUT/PATCH while one is streaming gets 409. */
  readonly #writing = new Set<string>();
  /** Hash states of uploads paused between two requests, so a PATCH need not hash the held bytes again. */
  readonly #partialHashes = new PartialHashes();
  #bytesReceived = 0;
  #sweepTimer: NodeJS.Timeout | undefined;

  constructor(options: ArtifactServiceOptions) {
    this.#store = options.store;
    this.blobs = options.blobs;
    this.config = options.config;
    this.#log = options.log;
    this.#now = options.now ?? Date.now;
  }

  /** Body bytes taken in by every upload since start (each byte counted once, when written). */
  get bytesReceived(): number {
    return this.#bytesReceived;
  }

  /** Status of an upload for HEAD/GET; 404 when none was started. */
  async status(location: PrivateLocation, runId: string, name: string): Promise<ArtifactUploadStatus> {
    const owner = await this.#ownerAt(location, runId, name);
    const record = await this.#store.artifacts.get(owner.accountId, runId, name);
    if (!record) throw new NotFoundError('No upload of this artifact was started; start it with PUT');
    const held = await this.blobs.stat(this.#key(owner, runId, name));
    return statusOf(record, record.complete ? record.size : (held?.size ?? 0));
  }

  /** PUT: starts the upload over from byte 0 with the body. */
  async start(
    location: PrivateLocation,
    runId: string,
    name: string,
    upload: StartUpload,
    body: AsyncIterable<Uint8Array>,
  ): Promise<ArtifactUploadStatus> {
    const owner = await this.#ownerAt(location, runId, name);
    const existing = await this.#store.artifacts.get(owner.accountId, runId, name);
    if (existing?.complete && existing.sha256 === upload.sha256 && existing.size === upload.size) {
      // The same bytes again (the agent lost our answer): nothing to write.
      return statusOf(existing, existing.size);
    }
    return this.#exclusive(runId, name, async () => {
      const record = await this.#store.artifacts.begin({
        ...upload,
        accountId: owner.accountId,
        runId,
        name,
        locationId: owner.locationId,
        checkId: owner.checkId,
      });
      return this.#receive(record, owner, 0, createHash('sha256'), body);
    });
  }

  /** PATCH: continues at `offset`, which must be exactly the bytes held (else 409 with the real offset). */
  async append(
    location: PrivateLocation,
    runId: string,
    name: string,
    offset: number,
    body: AsyncIterable<Uint8Array>,
  ): Promise<ArtifactUploadStatus> {
    const owner = await this.#ownerAt(location, runId, name);
    return this.#exclusive(runId, name, async () => {
      const record = await this.#store.artifacts.get(owner.accountId, runId, name);
      if (!record) throw new NotFoundError('No upload of this artifact was started; start it with PUT');
      const key = this.#key(owner, runId, name);
      const held = record.complete ? record.size : ((await this.blobs.stat(key))?.size ?? 0);
      if (record.complete && offset === record.size) return statusOf(record, record.size);
      if (offset !== held) throw new OffsetMismatchError(offset, held);
      const hash =
        this.#partialHashes.take(memoryKey(record.runId, record.name), generationOf(record), held) ??
        (await this.#hashHeld(key, held));
      return this.#receive(record, owner, held, hash, body);
    });
  }

  /** Complete artifacts of one of the account's results, with the result's check. */
  async forResult(accountId: string, checkId: string, resultId: string) {
    const ref = await this.#store.artifacts.resultRun(accountId, checkId, resultId);
    if (!ref) throw new NotFoundError('Check result not found');
    return { ref, artifacts: await this.#store.artifacts.listComplete(accountId, ref.runId) };
  }

  /**
   * A complete artifact's bytes for its account; 404 for anything else. `range` (inclusive, as
   * `byteRangeOf` gives it for the record's size) reads only part, for a video player's seeks.
   */
  async download(
    accountId: string,
    checkId: string,
    resultId: string,
    name: string,
    range?: (record: ArtifactRecord) => { start: number; end: number } | undefined,
  ): Promise<{ record: ArtifactRecord; body: Readable; range?: { start: number; end: number } }> {
    if (!isSafeArtifactName(name)) throw new NotFoundError('Asset not found');
    const { ref } = await this.forResult(accountId, checkId, resultId);
    const record = await this.#store.artifacts.get(accountId, ref.runId, name);
    if (!record?.complete) throw new NotFoundError('Asset not found');
    const part = range?.(record);
    return {
      record,
      body: this.blobs.read({ accountId, runId: ref.runId, name }, part),
      ...(part ? { range: part } : {}),
    };
  }

  /**
   * Retention: deletes artifacts whose check was deleted (its results went with it), whose run has
   * neither a result nor a run row any more, and uploads left incomplete longer than the TTL.
   */
  async sweep(limit = 500): Promise<number> {
    const cutoff = new Date(this.#now() - this.config.incompleteTtlSeconds * 1000).toISOString();
    const expired = await this.#store.artifacts.listExpired(cutoff, limit);
    for (const a of expired) {
      if (this.#writing.has(memoryKey(a.runId, a.name))) continue;
      await this.blobs.delete(a);
      await this.#store.artifacts.remove(a.accountId, a.runId, a.name);
    }
    if (expired.length > 0) this.#log.info({ deleted: expired.length }, 'artifacts past retention deleted');
    return expired.length;
  }

  startSweeping(everyMs = 10 * 60_000): void {
    const tick = () => {
      this.sweep().catch((err: unknown) => this.#log.error({ err }, 'artifact retention sweep failed'));
    };
    tick();
    this.#sweepTimer = setInterval(tick, everyMs);
    this.#sweepTimer.unref();
  }

  stopSweeping(): void {
    clearInterval(this.#sweepTimer);
    this.#sweepTimer = undefined;
  }

  async #receive(
    record: ArtifactRecord,
    owner: RunOwner,
    offset: number,
    hash: Hash,
    body: AsyncIterable<Uint8Array>,
  ): Promise<ArtifactUploadStatus> {
    const key = this.#key(owner, record.runId, record.name);
    const meter = meterBody(body, record.size - offset, hash);
    try {
      await this.blobs.write(key, offset, meter.chunks);
    } catch (err) {
      // The connection broke: what arrived is kept and HEAD reports it. Logged with its reason so
      // an operator can tell flaky networks from a broken agent.
      this.#log.warn(
        {
          runId: record.runId,
          name: record.name,
          received: offset + meter.taken,
          size: record.size,
          err: (err as Error).message,
        },
        'artifact upload interrupted; the agent can resume it',
      );
      throw err;
    } finally {
      this.#bytesReceived += meter.taken;
    }
    const received = offset + meter.taken;
    if (received < record.size) {
      this.#partialHashes.keep(memoryKey(record.runId, record.name), generationOf(record), received, hash);
      return statusOf(record, received);
    }
    const actual = hash.digest('hex');
    if (actual !== record.sha256) {
      await this.blobs.delete(key);
      await this.#store.artifacts.remove(owner.accountId, record.runId, record.name);
      this.#log.warn(
        { runId: record.runId, name: record.name, expected: record.sha256, actual },
        'artifact discarded: SHA-256 mismatch',
      );
      throw meter.overflowed
        ? new ArtifactBodyTooLongError(record.size, 'discarded')
        : new ArtifactDigestMismatchError(record.sha256, actual);
    }
    await this.#store.artifacts.markComplete(owner.accountId, record.runId, record.name);
    // The declared bytes made a whole, verified artifact: keep it, and still refuse what came after.
    if (meter.overflowed) throw new ArtifactBodyTooLongError(record.size, 'complete');
    return statusOf({ ...record, complete: true }, received);
  }

  /** The SHA-256 state of the first `held` bytes of a blob, read back at disk speed. */
  async #hashHeld(key: ArtifactKey, held: number): Promise<Hash> {
    const hash = createHash('sha256');
    if (held > 0)
      for await (const chunk of this.blobs.read(key, { start: 0, end: held - 1 })) hash.update(chunk as Buffer);
    return hash;
  }

  async #ownerAt(location: PrivateLocation, runId: string, name: string): Promise<RunOwner> {
    checkUploadParams(runId, name);
    const owner = await this.#store.artifacts.runOwner(runId);
    // Another location's run is indistinguishable from an unknown one.
    if (!owner || owner.locationId !== location.id) throw new NotFoundError(`Run ${runId} not found for this location`);
    return owner;
  }

  #key(owner: RunOwner, runId: string, name: string): ArtifactKey {
    return { accountId: owner.accountId, runId, name };
  }

  async #exclusive<T>(runId: string, name: string, fn: () => Promise<T>): Promise<T> {
    const k = memoryKey(runId, name);
    if (this.#writing.has(k)) {
      throw new ConflictError(
        'another request is uploading this artifact; ask HEAD for the offset and try again shortly',
      );
    }
    this.#writing.add(k);
    try {
      return await fn();
    } finally {
      this.#writing.delete(k);
    }
  }
}

/** 409 for a PATCH at the wrong offset; the route puts the real one in `upload-offset`. */
export class OffsetMismatchError extends ConflictError {
  readonly held: number;
  constructor(offset: number, held: number) {
    super(`upload-offset ${offset} does not match the ${held} bytes the service holds; continue from ${held}`);
    this.name = 'OffsetMismatchError';
    this.held = held;
  }
}

/** An artifact's key in this replica's maps (the write lock, the partial hashes): run ids are unique across accounts. */
function memoryKey(runId: string, name: string): string {
  return `${runId}\u0000${name}`;
}

function statusOf(record: ArtifactRecord, received: number): ArtifactUploadStatus {
  return {
    name: record.name,
    kind: record.kind,
    contentType: record.contentType,
    size: record.size,
    received,
    sha256: record.sha256,
    complete: record.complete,
  };
}
