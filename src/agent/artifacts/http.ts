/**
 * The agent side of the artifact upload calls (docs/protocol.md "Artifacts"), over undici. Bodies
 * are async iterables read from disk a chunk at a time, so nothing holds a whole artifact, and each
 * declares its length: the service reads a body of known length for less CPU than a chunked one.
 */
import type { Readable } from 'node:stream';
import type { Dispatcher } from '../http/undici.ts';
import { ARTIFACT_HEADERS, type ArtifactRef, type ArtifactUploadStatus, artifactPath } from '../../shared/artifacts.ts';
import { PermanentError, parseJsonAnswer, ServiceTransport, serviceMessage, TransientError } from '../client.ts';

export interface ArtifactHttpOptions {
  apiUrl: URL;
  apiKey: string;
  dispatcher: Dispatcher;
  /** Headers and idle-body timeout; a stalled transfer fails after this and is resumed. */
  timeoutMs?: number;
}

/** One request's body: `length` bytes, a chunk at a time (undici fails the request on any other count). */
export interface SizedBody {
  bytes: AsyncIterable<Uint8Array>;
  length: number;
}

/** A call refused with 409: another request holds the artifact, or our offset was stale. Retry after HEAD. */
export class UploadConflictError extends TransientError {}

/** 422: the service got every byte but they did not hash to the declared SHA-256. Start over. */
export class DigestMismatchError extends PermanentError {}

export class ArtifactHttp {
  readonly #transport: ServiceTransport;

  constructor(options: ArtifactHttpOptions) {
    this.#transport = new ServiceTransport({
      apiUrl: options.apiUrl,
      apiKey: options.apiKey,
      dispatcher: options.dispatcher,
      timeoutMs: options.timeoutMs ?? 60_000,
    });
  }

  /** What the service holds; undefined when no upload was started (or the run is unknown to it). */
  async status(runId: string, name: string, signal?: AbortSignal): Promise<ArtifactUploadStatus | undefined> {
    try {
      return await this.#call<ArtifactUploadStatus>('GET', runId, name, {}, undefined, signal);
    } catch (err) {
      if (err instanceof PermanentError && err.statusCode === 404) return undefined;
      throw err;
    }
  }

  /** PUT: (re)starts the upload from byte 0 with `body`. */
  start(runId: string, ref: ArtifactRef, body: SizedBody, signal?: AbortSignal): Promise<ArtifactUploadStatus> {
    return this.#call(
      'PUT',
      runId,
      ref.name,
      {
        'content-type': ref.contentType,
        [ARTIFACT_HEADERS.length]: String(ref.size),
        [ARTIFACT_HEADERS.kind]: ref.kind,
        [ARTIFACT_HEADERS.sha256]: ref.sha256,
      },
      body,
      signal,
    );
  }

  /** PATCH: continues at `offset` (which must be what the service holds). */
  append(
    runId: string,
    name: string,
    offset: number,
    body: SizedBody,
    signal?: AbortSignal,
  ): Promise<ArtifactUploadStatus> {
    return this.#call(
      'PATCH',
      runId,
      name,
      { 'content-type': 'application/offset+octet-stream', [ARTIFACT_HEADERS.offset]: String(offset) },
      body,
      signal,
    );
  }

  async #call<T>(
    method: 'GET' | 'PUT' | 'PATCH',
    runId: string,
    name: string,
    headers: Record<string, string>,
    body: SizedBody | undefined,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    const path = artifactPath(runId, name);
    const what = `${method} ${path}`;
    const { status, text } = await this.#transport.send(path, {
      method,
      label: what,
      headers: body ? { ...headers, 'content-length': String(body.length) } : headers,
      // An async iterable, given to undici as is (its types omit iterables; it accepts them): undici
      // then asks for the next chunk only once the last one is written or drained, which is what
      // lets the uploader reuse its buffers (see ArtifactUploader #segment).
      body: body?.bytes as unknown as Readable | undefined,
      signal,
    });
    if (status >= 200 && status < 300) return parseJsonAnswer<T>(what, status, text);
    const message = `${what}: ${status} ${serviceMessage(text) ?? 'HTTP error'}`;
    // 401: the key may be replaced while the artifact waits; it is not the artifact's fault.
    if (status >= 500 || status === 429 || status === 408 || status === 401) throw new TransientError(message, status);
    if (status === 409) throw new UploadConflictError(message, status);
    if (status === 422) throw new DigestMismatchError(message, status);
    throw new PermanentError(message, status);
  }
}
