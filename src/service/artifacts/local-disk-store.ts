import { createReadStream } from 'node:fs';
import { type FileHandle, mkdir, open, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { isSafeArtifactName, RUN_ID_PATTERN } from '../../shared/artifacts.ts';
import { type ArtifactBlobStore, type ArtifactKey, UnsafeArtifactKeyError } from './store.ts';

/** Account ids are UUIDs from our own database; checked anyway since they become a directory. */
const ACCOUNT_ID_PATTERN = /^[A-Za-z0-9-]{1,100}$/;

/**
 * Artifacts as files: `<root>/<accountId>/<runId>/<name>`. Every component is checked against a
 * strict pattern and the resolved path must stay under root, so no name can walk out of it.
 */
export class LocalDiskArtifactStore implements ArtifactBlobStore {
  readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  /** The file of a key; throws UnsafeArtifactKeyError for anything but safe components. */
  pathOf(key: ArtifactKey): string {
    return path.join(
      this.#runDir(key.accountId, key.runId),
      this.#safe(key.name, isSafeArtifactName(key.name), 'name'),
    );
  }

  async write(
    key: ArtifactKey,
    offset: number,
    source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  ): Promise<number> {
    const file = this.pathOf(key);
    await mkdir(path.dirname(file), { recursive: true });
    // 'w' truncates for a fresh start; 'r+' writes at an explicit position for a resume.
    const fh = await open(file, offset === 0 ? 'w' : 'r+', 0o600);
    try {
      if (offset > 0) await fh.truncate(offset);
      return await writeBatched(fh, offset, source);
    } finally {
      await fh.close();
    }
  }

  async stat(key: ArtifactKey): Promise<{ size: number } | undefined> {
    try {
      return { size: (await stat(this.pathOf(key))).size };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  read(key: ArtifactKey, range?: { start: number; end: number }): Readable {
    return createReadStream(this.pathOf(key), { ...(range ?? {}), highWaterMark: 1024 * 1024 });
  }

  async delete(key: ArtifactKey): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async deleteRun(accountId: string, runId: string): Promise<void> {
    await rm(this.#runDir(accountId, runId), { recursive: true, force: true });
    // The account directory stays: it is cheap and another upload may be creating a run in it.
  }

  #runDir(accountId: string, runId: string): string {
    return path.join(
      this.root,
      this.#safe(accountId, ACCOUNT_ID_PATTERN.test(accountId), 'accountId'),
      this.#safe(runId, RUN_ID_PATTERN.test(runId), 'runId'),
    );
  }

  #safe(value: string, ok: boolean, what: string): string {
    // Belt and braces: the pattern already excludes separators and dot-names.
    if (!ok || value.includes('/') || value.includes('\\') || value === '.' || value === '..') {
      throw new UnsafeArtifactKeyError(`unsafe artifact ${what}: ${JSON.stringify(value.slice(0, 80))}`);
    }
    return value;
  }
}

/**
 * Bytes gathered before one write. A socket hands over 64 KiB at a time, and a write per piece
 * would cost a thread-pool round trip each.
 */
const WRITE_BATCH_BYTES = 1024 * 1024;

/**
 * Writes `source` at `offset` through a 1 MiB batch buffer (copied into, so the source may reuse its
 * chunks). What is batched is written before this settles, also when the source fails (the client
 * went away): the file then holds every byte that arrived, which is the resume point.
 */
async function writeBatched(
  fh: FileHandle,
  offset: number,
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
): Promise<number> {
  const batch = Buffer.allocUnsafe(WRITE_BATCH_BYTES);
  let filled = 0;
  let position = offset;
  const flush = async () => {
    await writeAll(fh, batch.subarray(0, filled), position);
    position += filled;
    filled = 0;
  };
  try {
    for await (const chunk of source) {
      for (let taken = 0; taken < chunk.byteLength; ) {
        const n = Math.min(chunk.byteLength - taken, WRITE_BATCH_BYTES - filled);
        batch.set(chunk.subarray(taken, taken + n), filled);
        filled += n;
        taken += n;
        if (filled === WRITE_BATCH_BYTES) await flush();
      }
    }
  } catch (err) {
    await flush();
    throw err;
  }
  await flush();
  return position - offset;
}

async function writeAll(fh: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < bytes.byteLength; ) {
    const { bytesWritten } = await fh.write(bytes, done, bytes.byteLength - done, position + done);
    done += bytesWritten;
  }
}
