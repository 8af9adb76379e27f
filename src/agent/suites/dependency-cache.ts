/**
 * The opt-in dependency cache (DEPENDENCY_CACHE=on): a suite's installed node_modules kept under
 * DEPENDENCY_CACHE_DIR, keyed by a SHA-256 of the check it belongs to and of what decides its
 * contents: the lockfile and package.json bytes, the package manager and its arguments, the engine,
 * and the platform. Entries are copies the agent makes and owns (the folder is 0700): a run's
 * sandbox uid gets its own copy, never the entry itself. A hit
 * copies the folder into the job instead of installing; a miss installs and then stores a copy.
 *
 * Entries are written to a temporary folder and renamed into place, so a reader never sees half an
 * entry and two runs that miss at once both succeed (the second rename loses, harmlessly). Past
 * DEPENDENCY_CACHE_MAX_ENTRIES the least recently used entries are removed. Only the project's own
 * node_modules is cached (not those of workspace packages below it).
 */
import { createHash, randomUUID } from 'node:crypto';
import { cp, mkdir, readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import path from 'node:path';

export interface CacheKeyParts {
  /**
   * Whose runs may share an entry: the check (account and check id). An install runs user code (the
   * lifecycle scripts, steered by the check's variables), so what one check installed is restored
   * only into later runs of that same check, never into another's.
   */
  scope: string;
  lockfile: Buffer;
  packageJson: Buffer;
  packageManager: string;
  installArgs: readonly string[] | null;
  engine: string;
}

export function dependencyCacheKey(p: CacheKeyParts): string {
  const h = createHash('sha256');
  for (const part of [
    p.scope,
    p.lockfile,
    p.packageJson,
    p.packageManager,
    JSON.stringify(p.installArgs),
    p.engine,
    `${process.platform}-${process.arch}`,
  ]) {
    const b = typeof part === 'string' ? Buffer.from(part) : part;
    h.update(`${b.length}:`);
    h.update(b);
  }
  return h.digest('hex');
}

export class DependencyCache {
  readonly dir: string;
  readonly maxEntries: number;

  constructor(dir: string, maxEntries: number) {
    this.dir = dir;
    this.maxEntries = maxEntries;
  }

  #entry(key: string): string {
    return path.join(this.dir, key);
  }

  /** Copies the cached node_modules into `projectDir`; false when there is none. */
  async restore(key: string, projectDir: string): Promise<boolean> {
    const src = path.join(this.#entry(key), 'node_modules');
    try {
      if (!(await stat(src)).isDirectory()) return false;
    } catch {
      return false;
    }
    await cp(src, path.join(projectDir, 'node_modules'), { recursive: true, verbatimSymlinks: true, force: true });
    const now = new Date();
    await utimes(this.#entry(key), now, now).catch(() => {});
    return true;
  }

  /** Stores a copy of the `modules` folder (a project's node_modules) under `key` (no-op when it is none). */
  async store(key: string, modules: string): Promise<void> {
    try {
      if (!(await stat(modules)).isDirectory()) return;
    } catch {
      return;
    }
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const tmp = path.join(this.dir, `.tmp-${randomUUID()}`);
    try {
      await cp(modules, path.join(tmp, 'node_modules'), { recursive: true, verbatimSymlinks: true });
      await rename(tmp, this.#entry(key));
    } catch {
      // Another run stored the same key first (rename onto a non-empty folder fails): theirs is as good.
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
    await this.#evict();
  }

  async #evict(): Promise<void> {
    const names = (await readdir(this.dir).catch(() => [] as string[])).filter((n) => /^[0-9a-f]{64}$/.test(n));
    if (names.length <= this.maxEntries) return;
    const aged = await Promise.all(
      names.map(async (n) => ({ n, t: (await stat(this.#entry(n)).catch(() => undefined))?.mtimeMs ?? 0 })),
    );
    aged.sort((a, b) => a.t - b.t);
    for (const { n } of aged.slice(0, aged.length - this.maxEntries))
      await rm(this.#entry(n), { recursive: true, force: true });
  }
}
