/**
 * The SHA-256 state of uploads whose last request ended part-way, so that the PATCH continuing one
 * on this replica adds to it instead of reading every held byte back to hash them again (each
 * request of a 150 MB upload in three parts read up to 65 MB back; BENCHMARKS.md "Artifact upload").
 *
 * An entry serves only the same upload (`generation`: a PUT that starts over makes a new one) at the
 * exact offset it was left at. Anything else finds nothing and the caller hashes the held bytes as
 * before: another replica took a request in between, the request was cut (its hash may hold bytes
 * the blob store did not), or the entry was evicted. Bounded: the entry kept longest ago goes first.
 */
import type { Hash } from 'node:crypto';

/**
 * Uploads paused between two requests on one replica at once: an agent sends one artifact at a time,
 * so this is one per agent uploading. Past it the oldest entries go, and their next PATCH hashes the
 * held bytes again as it did before this cache; an entry is a few hundred bytes.
 */
const MAX_ENTRIES = 256;

interface Entry {
  generation: string;
  held: number;
  hash: Hash;
}

export class PartialHashes {
  readonly #entries = new Map<string, Entry>();
  readonly #max: number;

  constructor(max = MAX_ENTRIES) {
    this.#max = max;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Keeps `hash`, covering bytes [0, held) of the upload `generation` of `key`. */
  keep(key: string, generation: string, held: number, hash: Hash): void {
    this.#entries.delete(key);
    this.#entries.set(key, { generation, held, hash });
    if (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value as string);
  }

  /** The kept hash if it covers exactly [0, held) of this upload; the entry is gone either way. */
  take(key: string, generation: string, held: number): Hash | undefined {
    const entry = this.#entries.get(key);
    this.#entries.delete(key);
    return entry?.generation === generation && entry.held === held ? entry.hash : undefined;
  }
}
