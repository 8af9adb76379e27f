/**
 * Suite archives on the service's disk: `<dir>/<accountId>/<sha256>.<tgz|zip>`, written to a
 * temporary file and renamed into place. Content-addressed, so re-uploading the same archive is
 * free and a run always gets exactly the bytes its job names. Reads are scoped by account: an agent
 * of one account can never fetch another account's archive, even knowing its hash.
 * (Archives of deleted checks stay; they are small and may be shared by several checks.)
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SuiteArchiveFormat } from '../../shared/suite-archive.ts';

const SHA256 = /^[0-9a-f]{64}$/;
const ACCOUNT = /^[A-Za-z0-9-]{1,100}$/;
const EXT: Record<SuiteArchiveFormat, string> = { 'tar.gz': 'tgz', zip: 'zip' };

export interface StoredBundle {
  sha256: string;
  size: number;
  format: SuiteArchiveFormat;
  /** The reference's codeBundlePath: where the archive is, relative to the store. */
  path: string;
}

export class SuiteBundleStore {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  #file(accountId: string, sha256: string, format: SuiteArchiveFormat): string {
    if (!ACCOUNT.test(accountId) || !SHA256.test(sha256)) throw new Error('bad bundle key');
    return path.join(this.dir, accountId, `${sha256}.${EXT[format]}`);
  }

  async put(accountId: string, bytes: Buffer, format: SuiteArchiveFormat): Promise<StoredBundle> {
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const file = this.#file(accountId, sha256, format);
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${randomUUID()}.tmp`;
    try {
      await writeFile(tmp, bytes, { mode: 0o600 });
      await rename(tmp, file);
    } finally {
      await rm(tmp, { force: true });
    }
    return { sha256, size: bytes.length, format, path: `suites/${sha256}.${EXT[format]}` };
  }

  /** The archive's bytes, or undefined when this account has none with that hash. */
  async get(accountId: string, sha256: string): Promise<{ bytes: Buffer; format: SuiteArchiveFormat } | undefined> {
    if (!ACCOUNT.test(accountId) || !SHA256.test(sha256)) return undefined;
    for (const format of ['tar.gz', 'zip'] as const) {
      try {
        return { bytes: await readFile(this.#file(accountId, sha256, format)), format };
      } catch {
        // try the other format
      }
    }
    return undefined;
  }
}
