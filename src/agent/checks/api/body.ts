/**
 * Reading an API check's response body: kept up to a cap, counted and discarded up to a hard limit,
 * decompressed when its Content-Encoding says so. A body that cannot be decoded is not a lost
 * response: the status and headers stand, and only assertions that need the body fail, with why.
 */
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import zlib from 'node:zlib';
import type { AssertionResult } from '../../../shared/checks/types.ts';

/**
 * The response body kept in a result (and seen by assertions): 256 KiB. Results are stored and
 * shown per run; a bigger body would rarely help and would bloat every stored result.
 */
export const RESPONSE_BODY_CAP_BYTES = 256 * 1024;

/**
 * Past the cap the agent keeps reading and discarding, up to this many bytes in all, so that the
 * `download` phase measures the real transfer of ordinary large responses. Beyond it the agent stops
 * (closing the connection): a monitoring probe must not stream an endless or huge body for the
 * whole run timeout. `details.bodyComplete` says whether the end of the body was reached.
 */
export const RESPONSE_BODY_HARD_LIMIT_BYTES = 16 * 1024 * 1024;

type Decoder = zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress;

/** The decoder for a Content-Encoding, with the name the result uses for it; null for identity or unknown. */
function decoderFor(encoding: string | undefined): { name: string; decoder: Decoder } | null {
  switch ((encoding ?? '').trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return { name: 'gzip', decoder: zlib.createGunzip() };
    case 'deflate':
      return { name: 'deflate', decoder: zlib.createInflate() };
    case 'br':
      return { name: 'br', decoder: zlib.createBrotliDecompress() };
    default:
      return null;
  }
}

export interface BodyRead {
  /** The kept part of the (decoded) body as UTF-8 text; empty when it could not be decoded. */
  text: string;
  truncated: boolean;
  /** Decoded bytes read (up to the hard limit). */
  bytes: number;
  /** Whether the end of the body was reached. */
  complete: boolean;
  /** Why the body could not be decoded as its Content-Encoding says, else null. */
  decodeError: string | null;
  /** Whether the body was larger than the check's maxResponseBytes (the read stopped there). */
  overLimit: boolean;
}

function undecodable(name: string, contentEncoding: string | undefined, err: Error): BodyRead {
  const code = (err as { code?: unknown }).code;
  const why = `${err.message}${typeof code === 'string' ? ` (${code})` : ''}`;
  const decodeError = `the response body could not be decoded as ${name} (Content-Encoding: ${contentEncoding?.trim()}): ${why}`;
  return { text: '', truncated: false, bytes: 0, complete: false, decodeError, overLimit: false };
}

const ignore = (): void => {};

/**
 * Reads a body: the first RESPONSE_BODY_CAP_BYTES are kept as UTF-8 text, the rest read and
 * discarded up to RESPONSE_BODY_HARD_LIMIT_BYTES (see there why). A compressed body (the agent asks
 * for one with Accept-Encoding) is decompressed so that assertions see the text; the limits count
 * decompressed bytes, which also bounds a compression bomb. With the check's `maxBytes` the read
 * stops at the first byte past it, with `overLimit` (the run fails on it, as blackbox_exporter's
 * body_size_limit does). It rejects when the transfer fails (reset, abort); a body that arrived but
 * does not decode resolves with `decodeError`.
 */
export function readBody(
  body: Readable,
  contentEncoding: string | undefined,
  maxBytes: number | null = null,
): Promise<BodyRead> {
  const decoding = decoderFor(contentEncoding);
  const stopAt = maxBytes === null ? RESPONSE_BODY_HARD_LIMIT_BYTES : maxBytes + 1;
  // An error of the body itself reaches the decoder through the pipeline too; this tells them apart.
  let transferFailed = false;
  body.once('error', () => {
    transferFailed = true;
  });
  const source: Readable = decoding ? pipeline(body, decoding.decoder, ignore) : body;
  // 'data' events rather than `for await`: the async iterator costs a promise and a result object per
  // chunk and end-of-stream bookkeeping per run, which at high concurrency is measurable garbage.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    let bytes = 0;
    const detach = (): void => {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      source.off('close', onClose);
      // A stream destroyed past the hard limit may still report an error; it changes nothing now.
      source.on('error', ignore);
    };
    const finish = (complete: boolean): void => {
      detach();
      const truncated = bytes > kept;
      // StringDecoder.write holds back a multi-byte character cut by the cap instead of mangling it.
      const sd = new StringDecoder('utf8');
      const buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      const text = truncated ? sd.write(buf) : sd.write(buf) + sd.end();
      resolve({
        text,
        truncated,
        bytes,
        complete,
        decodeError: null,
        overLimit: maxBytes !== null && bytes > maxBytes,
      });
    };
    const onData = (chunk: Buffer): void => {
      bytes += chunk.length;
      // Past the cap nothing is kept: the chunk is only counted and dropped.
      if (kept < RESPONSE_BODY_CAP_BYTES) {
        const take = Math.min(chunk.length, RESPONSE_BODY_CAP_BYTES - kept);
        chunks.push(take === chunk.length ? chunk : chunk.subarray(0, take));
        kept += take;
      }
      if (bytes >= stopAt) {
        finish(false);
        body.destroy();
        source.destroy();
      }
    };
    const onEnd = (): void => finish(true);
    const onError = (err: Error): void => {
      detach();
      if (decoding && !transferFailed) resolve(undecodable(decoding.name, contentEncoding, err));
      else reject(err);
    };
    // Closed without 'end' or 'error' (destroyed under us, e.g. by the run's abort): an error, as
    // the async iterator would have said (ERR_STREAM_PREMATURE_CLOSE).
    const onClose = (): void =>
      onError(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    source.on('data', onData);
    source.once('end', onEnd);
    source.once('error', onError);
    source.once('close', onClose);
  });
}

/** Sources whose value is (part of) the body. */
const BODY_SOURCES = new Set(['TEXT_BODY', 'JSON_BODY']);

/**
 * With a body that could not be decoded, assertions on the body fail with that reason (there is no
 * body to compare); the others stand as evaluated.
 */
export function failBodyAssertions(results: AssertionResult[], decodeError: string | null): AssertionResult[] {
  if (decodeError === null) return results;
  return results.map((r) =>
    BODY_SOURCES.has(r.source) ? { ...r, actual: null, passed: false, error: decodeError } : r,
  );
}
