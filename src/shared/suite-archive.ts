/**
 * Playwright check suite archives (a project folder as .tar.gz or .zip), read with well-kept
 * libraries: node-tar for tar.gz, fflate for zip. The service lists an archive when it is uploaded
 * (a bad one is a 400 at once); the agent lists it again and unpacks it into the job folder.
 *
 * Safety, whatever the archive says: only regular files and folders (no links, devices or FIFOs),
 * no absolute paths, no `..` segments, at most `maxEntries` entries and `unpackedMaxBytes` bytes
 * as declared by the headers (node-tar writes exactly the declared size; fflate inflates into a
 * buffer of the declared size), and every path is checked again against the target folder before
 * a byte is written. An archive of one top-level folder (`tar czf x.tgz my-suite`) is unpacked
 * from inside that folder.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { unzipSync } from 'fflate';
import * as tar from 'tar';

export type SuiteArchiveFormat = 'tar.gz' | 'zip';

export interface SuiteArchiveLimits {
  maxEntries: number;
  unpackedMaxBytes: number;
}

/** The archive broke a rule; the message is for the user (it names the entry). */
export class SuiteArchiveError extends Error {
  override readonly name = 'SuiteArchiveError';
}

export interface SuiteArchiveListing {
  format: SuiteArchiveFormat;
  /** Files, relative to the project root (the top folder stripped when there is one). */
  files: string[];
  /** 1 when everything sat in a single top-level folder that was stripped, else 0. */
  strip: number;
  unpackedBytes: number;
}

export const PLAYWRIGHT_CONFIG_NAMES = [
  'playwright.config.ts',
  'playwright.config.js',
  'playwright.config.mts',
  'playwright.config.mjs',
  'playwright.config.cts',
  'playwright.config.cjs',
] as const;

/** Lockfiles in the order they are preferred when a project has several. */
export const LOCKFILES = ['package-lock.json', 'pnpm-lock.yaml', 'yarn.lock', 'bun.lock', 'bun.lockb'] as const;
export type Lockfile = (typeof LOCKFILES)[number];

export function detectArchiveFormat(buf: Uint8Array): SuiteArchiveFormat | undefined {
  if (buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b) return 'tar.gz';
  if (buf.length >= 4 && buf[0] === 0x50 && buf[1] === 0x4b && (buf[2] === 0x03 || buf[2] === 0x05)) return 'zip';
  return undefined;
}

/** A safe relative path for `raw`, or an error naming it. Folders end without a slash. */
function safeRelative(raw: string): string {
  if (raw.includes('\0')) throw new SuiteArchiveError(`entry ${JSON.stringify(raw)}: the name contains a NUL byte`);
  const name = raw.replace(/\\/g, '/');
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) throw new SuiteArchiveError(`entry ${JSON.stringify(raw)}: absolute paths are not allowed`);
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new SuiteArchiveError(`entry ${JSON.stringify(raw)}: ".." is not allowed in paths`);
  return parts.join('/');
}

interface RawEntry {
  name: string;
  dir: boolean;
  size: number;
}

function summarise(format: SuiteArchiveFormat, entries: RawEntry[], limits: SuiteArchiveLimits): SuiteArchiveListing {
  const files = entries.filter((e) => !e.dir && e.name !== '').map((e) => e.name);
  if (files.length === 0) throw new SuiteArchiveError('the archive holds no files');
  checkCaps(entries.length, entries.reduce((n, e) => n + e.size, 0), limits);
  const unpackedBytes = entries.reduce((n, e) => n + e.size, 0);
  // One top-level folder and no package.json at the root: the project is that folder.
  const tops = new Set(files.map((f) => f.split('/')[0]));
  const strip = !files.includes('package.json') && tops.size === 1 && files.every((f) => f.includes('/')) ? 1 : 0;
  const rel = strip ? files.map((f) => f.slice(f.indexOf('/') + 1)) : files;
  return { format, files: rel, strip, unpackedBytes };
}

function checkCaps(count: number, bytes: number, limits: SuiteArchiveLimits): void {
  if (count > limits.maxEntries) throw new SuiteArchiveError(`the archive has more than ${limits.maxEntries} entries (SUITE_MAX_ENTRIES)`);
  if (bytes > limits.unpackedMaxBytes) {
    throw new SuiteArchiveError(`the archive unpacks to more than ${limits.unpackedMaxBytes} bytes (SUITE_UNPACKED_MAX_BYTES); leave node_modules out of it`);
  }
}

const TAR_FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);

async function listTar(buf: Uint8Array, limits: SuiteArchiveLimits): Promise<RawEntry[]> {
  const entries: RawEntry[] = [];
  let problem: Error | undefined;
  let bytes = 0;
  const parser = new tar.Parser({
    strict: true,
    onReadEntry: (entry) => {
      entry.resume();
      if (problem) return;
      try {
        const type = entry.type as string;
        // Extended headers (PAX, long names) are folded into the entry by node-tar already.
        if (type === 'Directory') entries.push({ name: safeRelative(entry.path), dir: true, size: 0 });
        else if (TAR_FILE_TYPES.has(type)) {
          entries.push({ name: safeRelative(entry.path), dir: false, size: entry.size ?? 0 });
          bytes += entry.size ?? 0;
        } else throw new SuiteArchiveError(`entry ${JSON.stringify(entry.path)}: ${type} entries are not allowed (only files and folders)`);
        checkCaps(entries.length, bytes, limits);
      } catch (err) {
        problem = err as Error;
      }
    },
  });
  await new Promise<void>((resolve, reject) => {
    parser.on('error', (err: Error) => reject(new SuiteArchiveError(`not a readable tar.gz archive: ${err.message}`)));
    parser.on('warn', (_code: string, message: string | Error) => {
      problem ??= new SuiteArchiveError(`not a readable tar.gz archive: ${typeof message === 'string' ? message : message.message}`);
    });
    parser.on('end', () => resolve());
    parser.end(Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength));
  });
  if (problem) throw problem;
  return entries;
}

function listZip(buf: Uint8Array, limits: SuiteArchiveLimits): RawEntry[] {
  const entries: RawEntry[] = [];
  let bytes = 0;
  try {
    unzipSync(buf, {
      filter: (file) => {
        const dir = file.name.endsWith('/');
        entries.push({ name: safeRelative(file.name), dir, size: dir ? 0 : file.originalSize });
        bytes += dir ? 0 : file.originalSize;
        checkCaps(entries.length, bytes, limits);
        return false;
      },
    });
  } catch (err) {
    if (err instanceof SuiteArchiveError) throw err;
    throw new SuiteArchiveError(`not a readable zip archive: ${(err as Error).message}`);
  }
  return entries;
}

/** Lists and checks an archive without writing anything. */
export async function listSuiteArchive(buf: Uint8Array, limits: SuiteArchiveLimits): Promise<SuiteArchiveListing> {
  const format = detectArchiveFormat(buf);
  if (!format) throw new SuiteArchiveError('the archive is neither tar.gz nor zip');
  const entries = format === 'tar.gz' ? await listTar(buf, limits) : listZip(buf, limits);
  return summarise(format, entries, limits);
}

/** Where `rel` lands under `root`, refusing anything that would leave it. */
function inside(root: string, rel: string): string {
  const target = path.resolve(root, rel);
  if (target !== root && !target.startsWith(`${root}${path.sep}`)) throw new SuiteArchiveError(`entry ${JSON.stringify(rel)} would leave the project folder`);
  return target;
}

/**
 * Unpacks `buf` into `dest` (which must exist and be empty) after listing it; returns the listing.
 * Files are written 0644 and folders 0755 whatever the archive says.
 */
export async function extractSuiteArchive(buf: Uint8Array, dest: string, limits: SuiteArchiveLimits): Promise<SuiteArchiveListing> {
  const listing = await listSuiteArchive(buf, limits);
  const root = path.resolve(dest);
  if (listing.format === 'tar.gz') {
    await new Promise<void>((resolve, reject) => {
      const unpack = new tar.Unpack({
        cwd: root,
        strip: listing.strip,
        strict: true,
        preservePaths: false,
        preserveOwner: false,
        chmod: false,
        dmode: 0o755,
        fmode: 0o644,
        // The listing allowed only files and folders; this keeps it so if the stream differs.
        filter: (p, entry) => {
          const type = (entry as tar.ReadEntry).type as string;
          if (type !== 'Directory' && !TAR_FILE_TYPES.has(type)) return false;
          inside(root, safeRelative(p));
          return true;
        },
      });
      unpack.on('error', (err: Error) => reject(err instanceof SuiteArchiveError ? err : new SuiteArchiveError(`unpacking failed: ${err.message}`)));
      unpack.on('close', () => resolve());
      unpack.end(Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength));
    });
    return listing;
  }
  const wanted = new Set<string>();
  const files = unzipSync(buf, {
    filter: (file) => {
      if (file.name.endsWith('/')) return false;
      wanted.add(file.name);
      return true;
    },
  });
  for (const [name, data] of Object.entries(files)) {
    let rel = safeRelative(name);
    if (listing.strip) rel = rel.slice(rel.indexOf('/') + 1);
    if (rel === '') continue;
    const target = inside(root, rel);
    await mkdir(path.dirname(target), { recursive: true, mode: 0o755 });
    await writeFile(target, data, { mode: 0o644, flag: 'wx' });
  }
  return listing;
}

export interface SuiteProjectLayout {
  /** The folder (relative, '' for the root) holding package.json and the Playwright config. */
  workingDir: string;
  lockfile: Lockfile | undefined;
  /** The lockfile's path in the archive (in workingDir or the nearest folder above it). */
  lockfilePath: string | undefined;
  configFile: string | undefined;
}

/**
 * Finds the project's package.json, lockfile and Playwright config under `workingDir` (the
 * check's, or the root). A lockfile may sit in a parent folder (a workspace); the nearest wins.
 */
export function projectLayout(files: readonly string[], workingDir: string | null | undefined): SuiteProjectLayout {
  const dir = workingDir ? safeRelative(workingDir) : '';
  const at = (name: string) => (dir ? `${dir}/${name}` : name);
  const set = new Set(files);
  const configFile = PLAYWRIGHT_CONFIG_NAMES.find((n) => set.has(at(n)));
  let lockfile: Lockfile | undefined;
  let lockfilePath: string | undefined;
  const parts = dir ? dir.split('/') : [];
  for (let i = parts.length; i >= 0 && !lockfile; i -= 1) {
    const prefix = parts.slice(0, i).join('/');
    lockfile = LOCKFILES.find((l) => set.has(prefix ? `${prefix}/${l}` : l));
    if (lockfile) lockfilePath = prefix ? `${prefix}/${lockfile}` : lockfile;
  }
  return { workingDir: dir, lockfile, lockfilePath, configFile };
}

/** What a suite archive must hold; each problem in words, empty when it is fine. */
export function projectProblems(files: readonly string[], workingDir: string | null | undefined): string[] {
  const layout = projectLayout(files, workingDir);
  const where = layout.workingDir ? `in ${layout.workingDir}/` : 'at the root of the archive';
  const problems: string[] = [];
  if (!files.includes(layout.workingDir ? `${layout.workingDir}/package.json` : 'package.json')) problems.push(`no package.json ${where}`);
  if (!layout.lockfile) problems.push(`no lockfile (${LOCKFILES.join(', ')}) ${where} or above it`);
  if (!layout.configFile) problems.push(`no Playwright config (${PLAYWRIGHT_CONFIG_NAMES.join(', ')}) ${where}`);
  return problems;
}
