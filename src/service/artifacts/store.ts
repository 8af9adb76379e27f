/**
 * Where artifact bytes live. The service talks to this interface only, so an S3-compatible store
 * (multipart upload for writes at an offset, ranged GET for reads) can replace the local disk
 * without touching the routes. Metadata (kind, sha256, complete) is in the Store's artifacts repo.
 */
import type { Readable } from 'node:stream';

export interface ArtifactKey {
  accountId: string;
  runId: string;
  name: string;
}

/** A key component that is not a safe name: refused before any path or object key is built. */
export class UnsafeArtifactKeyError extends Error {
  override readonly name = 'UnsafeArtifactKeyError';
}

export interface ArtifactBlobStore {
  /**
   * Writes `source` at `offset` (0 truncates; otherwise it must equal the current size), in order.
   * A store may gather chunks into larger writes, copying them: a chunk must not be read once the
   * next one is asked for (the source may reuse or free it then). Whatever it took from `source` is
   * persisted before write() settles, also when `source` fails (the client went away): what arrived
   * stays and `stat` reports it, which is the resume point. Resolves with the bytes written; rejects
   * with the source's error after keeping what arrived.
   */
  write(key: ArtifactKey, offset: number, source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<number>;
  /** Bytes held for the key, or undefined when there are none. */
  stat(key: ArtifactKey): Promise<{ size: number } | undefined>;
  /** The bytes, optionally a range [start, end] inclusive as in fs.createReadStream. */
  read(key: ArtifactKey, range?: { start: number; end: number }): Readable;
  delete(key: ArtifactKey): Promise<void>;
  /** Every artifact of a run. */
  deleteRun(accountId: string, runId: string): Promise<void>;
}
