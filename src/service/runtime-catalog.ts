/**
 * The runtimes user code can run on, as GET /v1/runtimes describes them: one per folder of
 * `<package root>/runtimes` whose name is a release id (2026.04), read from its package.json (the
 * pinned Node.js and the libraries scripts may require) and package-lock.json (the exact versions
 * installed).
 *
 * The service image carries no runtimes (agents run them, the service never does), so the service
 * reads runtime-catalog.json, written from those folders by `node scripts/runtime-catalog.ts` and
 * copied into dist/ with the other assets; test/service/reference-reads.test.ts fails when it no
 * longer matches them.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_RUNTIME_ID } from '../shared/checks/types.ts';
import { newestFirst, packageRuntimesDir, runtimeFolderNames } from '../shared/runtimes.ts';

/** The reference's Runtime schema. */
export interface RuntimeInfo {
  name: string;
  multiStepSupport: boolean;
  nodeJsVersion: string;
  stage: 'CURRENT' | 'STABLE';
  description: string;
  dependencies: Record<string, string>;
}

export { packageRuntimesDir };

interface PackageJson {
  description?: string;
  dependencies?: Record<string, string>;
}
interface PackageLock {
  packages?: Record<string, { version?: string }>;
}

async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** One runtime folder; undefined when it has no readable package.json or no pinned `node`. */
async function describe(dir: string, id: string): Promise<RuntimeInfo | undefined> {
  const pkg = await readJson<PackageJson>(path.join(dir, 'package.json'));
  const node = pkg?.dependencies?.node;
  if (!pkg || !node) return undefined;
  const lock = await readJson<PackageLock>(path.join(dir, 'package-lock.json'));
  // The version installed when the lockfile says; the declared range otherwise.
  const dependencies = Object.fromEntries(
    Object.entries(pkg.dependencies ?? {})
      .filter(([name]) => name !== 'node')
      .map(([name, range]) => [name, lock?.packages?.[`node_modules/${name}`]?.version ?? range]),
  );
  const playwright = dependencies.playwright ?? dependencies['@playwright/test'];
  return {
    name: id,
    // Every runtime here runs browser and multistep scripts alike (src/agent/sandbox).
    multiStepSupport: true,
    nodeJsVersion: node.replace(/^[~^=v]+/, ''),
    stage: id === DEFAULT_RUNTIME_ID ? 'CURRENT' : 'STABLE',
    description: `Main updates are Node.js ${node.split('.')[0]?.replace(/^[~^=v]+/, '')}${playwright ? ` and Playwright ${playwright}` : ''}`,
    dependencies,
  };
}

/** Every runtime under `dir`, newest first; a missing folder means none. */
export async function listRuntimes(dir = packageRuntimesDir()): Promise<RuntimeInfo[]> {
  const names = await runtimeFolderNames(dir);
  const found = await Promise.all(names.map((n) => describe(path.join(dir, n), n)));
  return found.filter((r): r is RuntimeInfo => r !== undefined).sort((a, b) => newestFirst(a.name, b.name));
}

/** Where the catalog the service serves is kept, next to this module (src/ or dist/). */
export const CATALOG_FILE = fileURLToPath(new URL('./runtime-catalog.json', import.meta.url));

/** The catalog the service serves; none when the file is missing (a build without its assets). */
export function readRuntimeCatalog(file = CATALOG_FILE): RuntimeInfo[] {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as RuntimeInfo[];
  } catch {
    return [];
  }
}
