/**
 * The agent's unpack step for suite archives (src/shared/suite-archive.ts) against archive bombs:
 * refused with a clear error naming the cap, promptly, in little memory and with at most the cap
 * written to disk; a maximal legal archive is unpacked whole in little memory. Also through the
 * Playwright check runner: a bomb is a setup error of the unpack phase, before any install.
 */
import { mkdtempSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPlaywrightCheckRunner } from '../../src/agent/checks/playwright.ts';
import { extractSuiteArchive, type SuiteArchiveLimits } from '../../src/shared/suite-archive.ts';
import {
  BOMBS,
  DEFAULT_CAPS,
  maximalTarGz,
  maximalZip,
  measured,
  MiB,
  projectBytes,
  REFUSAL_MS,
  RSS_BUDGET,
  refusalAfter,
  SMALLEST_PROJECT,
  tarGzBomb,
} from './suite-bombs.ts';
import { zipBuffer } from '../helpers/zip.ts';
import { MemoryBundles, runCheck, suiteCheck, suiteConfig } from './suite-helpers.ts';

const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'sa-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const project = SMALLEST_PROJECT;
const limits = DEFAULT_CAPS;

function freshDir(): string {
  return mkdtempSync(path.join(root, 'd'));
}

/** Bytes of the files under `dir`. */
function bytesUnder(dir: string): number {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .reduce((sum, e) => sum + statSync(path.join(e.parentPath, e.name)).size, 0);
}

async function unpack(archive: Buffer, caps: SuiteArchiveLimits = limits) {
  const dest = freshDir();
  const { result, ms, rss } = await measured(() =>
    extractSuiteArchive(archive, dest, caps).then(
      (listing) => ({ listing, error: undefined }),
      (error: Error) => ({ listing: undefined, error }),
    ),
  );
  return { ...result, ms, rss, written: bytesUnder(dest) };
}

describe('unpacking a bomb', () => {
  it.each(BOMBS)(
    'refuses %s with an error naming the limit it breaks, promptly, in little memory, writing at most the cap',
    async (_what, bomb) => {
      const res = await unpack(bomb.archive());
      expect(res.error?.name).toBe('SuiteArchiveError');
      expect(res.error?.message).toMatch(refusalAfter('', bomb.refusal));
      expect(res.ms).toBeLessThan(REFUSAL_MS);
      expect(res.rss).toBeLessThan(RSS_BUDGET);
      // A tar.gz is refused before anything is written; a zip entry may be, up to the cap.
      expect(res.written).toBeLessThanOrEqual(bomb.format === 'zip' ? limits.unpackedMaxBytes : 0);
    },
  );

  it('refuses a tar.gz with more entries than SUITE_MAX_ENTRIES', async () => {
    const res = await unpack(maximalTarGz(project, 4096), { maxEntries: 3, unpackedMaxBytes: limits.unpackedMaxBytes });
    expect(res.error?.message).toMatch(/^the archive has more than 3 entries \(SUITE_MAX_ENTRIES\)/);
    expect(res.written).toBe(0);
  });
});

describe('unpacking a maximal legal archive', () => {
  // A smaller cap than the default keeps the disk writes of this test small.
  const caps: SuiteArchiveLimits = { maxEntries: 10_000, unpackedMaxBytes: 32 * MiB };

  it('unpacks a tar.gz of exactly the cap whole, in little memory', async () => {
    const res = await unpack(maximalTarGz(project, caps.unpackedMaxBytes), caps);
    expect(res.error).toBeUndefined();
    expect(res.listing?.unpackedBytes).toBe(caps.unpackedMaxBytes);
    expect(res.written).toBe(caps.unpackedMaxBytes);
    expect(res.rss).toBeLessThan(RSS_BUDGET);
  });

  it('unpacks a zip of exactly the cap whole, in little memory', async () => {
    const res = await unpack(maximalZip(project, caps.unpackedMaxBytes), caps);
    expect(res.error).toBeUndefined();
    expect(res.written).toBe(caps.unpackedMaxBytes);
    expect(res.rss).toBeLessThan(RSS_BUDGET);
  });
});

describe('unpacking a project in one top folder', () => {
  const inTop = Object.fromEntries(Object.entries(project).map(([name, text]) => [`my-suite/${name}`, text]));

  it('unpacks a tar.gz from inside the folder', async () => {
    const dest = freshDir();
    const listing = await extractSuiteArchive(maximalTarGz(inTop, 4096, 'my-suite/zeros.bin'), dest, limits);
    expect(listing.strip).toBe(1);
    expect(readdirSync(dest).sort()).toEqual([
      'package-lock.json',
      'package.json',
      'playwright.config.ts',
      'zeros.bin',
    ]);
  });

  it('unpacks a zip from inside the folder, with its folder entry', async () => {
    const dest = freshDir();
    const zip = await zipBuffer({ 'my-suite/': '', ...inTop });
    const listing = await extractSuiteArchive(zip, dest, limits);
    expect(listing.strip).toBe(1);
    expect(readdirSync(dest).sort()).toEqual(['package-lock.json', 'package.json', 'playwright.config.ts']);
    expect(bytesUnder(dest)).toBe(projectBytes(project));
  });
});

describe('the Playwright check runner', () => {
  it('reports a bomb as a setup error of the unpack phase, before any install, and leaves no job folder', async () => {
    const bundles = new MemoryBundles();
    const config = suiteConfig(root);
    const runner = createPlaywrightCheckRunner({ config, bundles });
    const {
      result: { outcome, pw },
      ms,
    } = await measured(() => runCheck(runner, suiteCheck(bundles.add(tarGzBomb(1024)))));
    expect(ms).toBeLessThan(REFUSAL_MS);
    expect(pw.status).toBe('setup-error');
    expect(outcome.error).toMatch(
      /^setup error: the suite archive cannot be used: the archive unpacks to more than 209715200 bytes \(SUITE_UNPACKED_MAX_BYTES\)/,
    );
    expect(pw.errors[0]).toMatchObject({ phase: 'unpack' });
    expect(readdirSync(config.jobsRoot)).toEqual([]);
  });
});
