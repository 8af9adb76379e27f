/**
 * Playwright check suite archives (a project folder as .tar.gz or .zip), read as streams with
 * well-kept libraries: node:zlib and node-tar's parser for tar.gz, yauzl for zip. The service lists
 * an archive when it is uploaded (a bad one is a 400 at once); the agent lists it again and unpacks
 * it into the job folder.
 *
 * Nothing is ever inflated whole into memory: a few MB of archive can unpack to GiBs (a bomb), so
 * bytes and entries are counted as they stream and the streams are destroyed as soon as a cap is
 * crossed. Safety, whatever the archive says: only regular files and folders (no links, devices
 * or FIFOs), no absolute paths, no `..` segments, at most `maxEntries` entries and
 * `unpackedMaxBytes` bytes of files (a tar body is exactly its declared size; a zip entry may not
 * inflate past its declared size), a tar stream no longer than its files and headers can make it
 * and at most TAR_TRAILER_MAX_BYTES after its end-of-archive marker, and every path is checked
 * again against the target folder before a byte is written. An archive of one top-level folder
 * (`tar czf x.tgz my-suite`) is unpacked from inside that folder.
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough, Readable, Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import * as tar from 'tar';
import yauzl from 'yauzl';

export type SuiteArchiveFormat = 'tar.gz' | 'zip';

export interface SuiteArchiveLimits {
  maxEntries: number;
  unpackedMaxBytes: number;
}

/** The archive broke a rule; the message is for the user (it names the entry or the cap). */
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

/** Tar headers, extended (PAX) headers and padding an entry may bring on top of its body. */
const TAR_HEADER_ALLOWANCE_BYTES = 4096;
/** What may follow a tar's end-of-archive marker: record padding, not data. */
export const TAR_TRAILER_MAX_BYTES = 1024 * 1024;
/** Gunzip output chunks: large enough to inflate quickly, small enough to stop promptly. */
const INFLATE_CHUNK_BYTES = 64 * 1024;

export function detectArchiveFormat(buf: Uint8Array): SuiteArchiveFormat | undefined {
  if (buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b) return 'tar.gz';
  if (buf.length >= 4 && buf[0] === 0x50 && buf[1] === 0x4b && (buf[2] === 0x03 || buf[2] === 0x05)) return 'zip';
  return undefined;
}

/** A safe relative path for `raw`, or an error naming it. Folders end without a slash. */
function safeRelative(raw: string): string {
  if (raw.includes('\0')) throw new SuiteArchiveError(`entry ${JSON.stringify(raw)}: the name contains a NUL byte`);
  const name = raw.replace(/\\/g, '/');
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name))
    throw new SuiteArchiveError(`entry ${JSON.stringify(raw)}: absolute paths are not allowed`);
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new SuiteArchiveError(`entry ${JSON.stringify(raw)}: ".." is not allowed in paths`);
  return parts.join('/');
}

interface RawEntry {
  name: string;
  dir: boolean;
  size: number;
}

function tooManyEntries(limits: SuiteArchiveLimits): SuiteArchiveError {
  return new SuiteArchiveError(`the archive has more than ${limits.maxEntries} entries (SUITE_MAX_ENTRIES)`);
}

/** Entries and declared bytes so far; throws as soon as a cap is crossed. */
class CapCounter {
  readonly entries: RawEntry[] = [];
  bytes = 0;
  readonly limits: SuiteArchiveLimits;
  constructor(limits: SuiteArchiveLimits) {
    this.limits = limits;
  }

  add(entry: RawEntry): void {
    this.entries.push(entry);
    this.bytes += entry.size;
    if (this.entries.length > this.limits.maxEntries) throw tooManyEntries(this.limits);
    if (this.bytes > this.limits.unpackedMaxBytes) {
      throw new SuiteArchiveError(
        `the archive unpacks to more than ${this.limits.unpackedMaxBytes} bytes (SUITE_UNPACKED_MAX_BYTES); leave node_modules out of it`,
      );
    }
  }
}

function summarise(format: SuiteArchiveFormat, counter: CapCounter): SuiteArchiveListing {
  const files = counter.entries.filter((e) => !e.dir && e.name !== '').map((e) => e.name);
  if (files.length === 0) throw new SuiteArchiveError('the archive holds no files');
  // One top-level folder and no package.json at the root: the project is that folder.
  const tops = new Set(files.map((f) => f.split('/')[0]));
  const strip = !files.includes('package.json') && tops.size === 1 && files.every((f) => f.includes('/')) ? 1 : 0;
  const rel = strip ? files.map((f) => f.slice(f.indexOf('/') + 1)) : files;
  return { format, files: rel, strip, unpackedBytes: counter.bytes };
}

/** A pass-through that fails with `error()` once more than `max` bytes went through it. */
function byteCap(max: number, error: () => SuiteArchiveError): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      done(seen > max ? error() : null, chunk);
    },
  });
}

function asBuffer(buf: Uint8Array): Buffer {
  return Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
}

// ---- tar.gz

const TAR_FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);

/** The entry as a file or folder with a safe name, or an error naming it. */
function tarEntry(entry: tar.ReadEntry): RawEntry {
  const type = entry.type as string;
  // Extended headers (PAX, long names) are folded into the entry by node-tar already.
  if (type === 'Directory') return { name: safeRelative(entry.path), dir: true, size: 0 };
  if (TAR_FILE_TYPES.has(type)) return { name: safeRelative(entry.path), dir: false, size: entry.size ?? 0 };
  throw new SuiteArchiveError(
    `entry ${JSON.stringify(entry.path)}: ${type} entries are not allowed (only files and folders)`,
  );
}

function tarProblem(message: string | Error): SuiteArchiveError {
  if (message instanceof SuiteArchiveError) return message;
  return new SuiteArchiveError(
    `not a readable tar.gz archive: ${typeof message === 'string' ? message : message.message}`,
  );
}

/**
 * A sink that feeds the inflated tar stream to `parser` with back-pressure, stops feeding it at the
 * end-of-archive marker (counting what follows against TAR_TRAILER_MAX_BYTES) and finishes when the
 * parser has emitted `doneEvent` (`end` for a Parser, `close` for an Unpack, after its writes).
 */
function tarSink(parser: tar.Parser, doneEvent: 'end' | 'close'): Writable {
  let ended = false;
  let trailer = 0;
  const sink: Writable = new Writable({
    write(chunk: Buffer, _enc, done) {
      if (!ended) {
        if (parser.write(chunk)) done();
        else parser.once('drain', () => done());
        return;
      }
      trailer += chunk.length;
      done(
        trailer > TAR_TRAILER_MAX_BYTES
          ? new SuiteArchiveError(`more than ${TAR_TRAILER_MAX_BYTES} bytes follow the end of the tar archive`)
          : null,
      );
    },
    final(done) {
      parser.once(doneEvent, () => done());
      parser.end();
    },
  });
  parser.on('eof', () => {
    ended = true;
  });
  parser.on('error', (err: Error) => sink.destroy(tarProblem(err)));
  parser.on('warn', (_code: string, message: string | Error) => sink.destroy(tarProblem(message)));
  return sink;
}

/**
 * Inflates `buf` chunk by chunk into `parser`; rejects with the first problem, whether the caller's
 * (the reason it aborts `signal` with, which destroys the streams so nothing more is inflated) or
 * the stream's.
 */
async function runTar(
  buf: Uint8Array,
  limits: SuiteArchiveLimits,
  parser: tar.Parser,
  doneEvent: 'end' | 'close',
  signal: AbortSignal,
): Promise<void> {
  const streamMax =
    limits.unpackedMaxBytes + (limits.maxEntries + 1) * TAR_HEADER_ALLOWANCE_BYTES + TAR_TRAILER_MAX_BYTES;
  const tooLong = () =>
    new SuiteArchiveError(
      `the archive unpacks to more than ${limits.unpackedMaxBytes} bytes (SUITE_UNPACKED_MAX_BYTES) plus its tar headers`,
    );
  try {
    await pipeline(
      Readable.from([asBuffer(buf)], { objectMode: false }),
      createGunzip({ chunkSize: INFLATE_CHUNK_BYTES }),
      byteCap(streamMax, tooLong),
      tarSink(parser, doneEvent),
      { signal },
    );
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (err instanceof SuiteArchiveError) throw err;
    throw tarProblem(err as Error);
  }
}

async function listTar(buf: Uint8Array, limits: SuiteArchiveLimits): Promise<CapCounter> {
  const counter = new CapCounter(limits);
  const stop = new AbortController();
  const parser = new tar.Parser({
    strict: true,
    onReadEntry: (entry) => {
      entry.resume();
      if (stop.signal.aborted) return;
      try {
        counter.add(tarEntry(entry));
      } catch (err) {
        stop.abort(err);
      }
    },
  });
  await runTar(buf, limits, parser, 'end', stop.signal);
  return counter;
}

/** Where `rel` lands under `root`, refusing anything that would leave it. */
function inside(root: string, rel: string): string {
  const target = path.resolve(root, rel);
  if (target !== root && !target.startsWith(`${root}${path.sep}`))
    throw new SuiteArchiveError(`entry ${JSON.stringify(rel)} would leave the project folder`);
  return target;
}

async function extractTar(
  buf: Uint8Array,
  root: string,
  listing: SuiteArchiveListing,
  limits: SuiteArchiveLimits,
): Promise<void> {
  const counter = new CapCounter(limits);
  const stop = new AbortController();
  const unpack = new tar.Unpack({
    cwd: root,
    strip: listing.strip,
    strict: true,
    preservePaths: false,
    preserveOwner: false,
    chmod: false,
    dmode: 0o755,
    fmode: 0o644,
    // The listing allowed only files and folders within the caps; this keeps it so if the stream differs.
    filter: (p, entry) => {
      if (stop.signal.aborted) return false;
      try {
        counter.add(tarEntry(entry as tar.ReadEntry));
        inside(root, safeRelative(p));
        return true;
      } catch (err) {
        stop.abort(err);
        return false;
      }
    },
  });
  await runTar(buf, limits, unpack, 'close', stop.signal);
}

// ---- zip

function openZip(buf: Uint8Array): Promise<yauzl.ZipFile> {
  // Names are decoded here rather than by yauzl, so an unsafe one gets this module's message.
  return yauzl
    .fromBufferPromise(asBuffer(buf), { lazyEntries: true, decodeStrings: false, validateEntrySizes: true })
    .catch((err: Error) => {
      throw new SuiteArchiveError(`not a readable zip archive: ${err.message}`);
    });
}

function zipEntry(entry: yauzl.Entry): RawEntry {
  const raw = yauzl.getFileNameLowLevel(
    entry.generalPurposeBitFlag,
    entry.fileName as unknown as Buffer,
    entry.extraFields,
    false,
  );
  const dir = raw.endsWith('/');
  return { name: safeRelative(raw), dir, size: dir ? 0 : entry.uncompressedSize };
}

/**
 * Inflates one entry into `sink`, failing the moment it passes the size its header declares (the
 * caps were checked against that size), so a lying entry is cut off rather than inflated.
 */
async function inflateZipEntry(zip: yauzl.ZipFile, entry: yauzl.Entry, raw: RawEntry, sink: Writable): Promise<void> {
  const tooBig = () =>
    new SuiteArchiveError(
      `entry ${JSON.stringify(raw.name)} unpacks to more than the ${raw.size} bytes its header declares`,
    );
  try {
    const body = await zip.openReadStreamPromise(entry);
    await pipeline(body, byteCap(raw.size, tooBig), sink);
  } catch (err) {
    if (err instanceof SuiteArchiveError) throw err;
    if (/too many bytes/.test((err as Error).message)) throw tooBig();
    // Also a second entry of the same name, which the `wx` write refuses.
    throw new SuiteArchiveError(`entry ${JSON.stringify(raw.name)}: ${(err as Error).message}`);
  }
}

/** Walks every entry of a zip in order, counting it against the caps before `each` inflates it. */
async function walkZip(
  buf: Uint8Array,
  limits: SuiteArchiveLimits,
  each: (entry: yauzl.Entry, raw: RawEntry, zip: yauzl.ZipFile) => Promise<void>,
): Promise<CapCounter> {
  const zip = await openZip(buf);
  const counter = new CapCounter(limits);
  try {
    // The central directory says how many entries follow: refused before any is read.
    if (zip.entryCount > limits.maxEntries) throw tooManyEntries(limits);
    for await (const entry of zip.eachEntry()) {
      const raw = zipEntry(entry);
      counter.add(raw);
      if (!raw.dir) await each(entry, raw, zip);
    }
  } catch (err) {
    if (err instanceof SuiteArchiveError) throw err;
    throw new SuiteArchiveError(`not a readable zip archive: ${(err as Error).message}`);
  } finally {
    zip.close();
  }
  return counter;
}

function listZip(buf: Uint8Array, limits: SuiteArchiveLimits): Promise<CapCounter> {
  return walkZip(buf, limits, (entry, raw, zip) => inflateZipEntry(zip, entry, raw, new PassThrough().resume()));
}

/** Files are written 0644 and never over an existing file. */
async function extractZip(
  buf: Uint8Array,
  root: string,
  listing: SuiteArchiveListing,
  limits: SuiteArchiveLimits,
): Promise<void> {
  await walkZip(buf, limits, async (entry, raw, zip) => {
    const rel = listing.strip ? raw.name.slice(raw.name.indexOf('/') + 1) : raw.name;
    if (rel === '') return;
    const target = inside(root, rel);
    await mkdir(path.dirname(target), { recursive: true, mode: 0o755 });
    await inflateZipEntry(zip, entry, raw, createWriteStream(target, { mode: 0o644, flags: 'wx' }));
  });
}

// ---- both

/** Lists and checks an archive without writing anything. */
export async function listSuiteArchive(buf: Uint8Array, limits: SuiteArchiveLimits): Promise<SuiteArchiveListing> {
  const format = detectArchiveFormat(buf);
  if (!format) throw new SuiteArchiveError('the archive is neither tar.gz nor zip');
  const counter = format === 'tar.gz' ? await listTar(buf, limits) : await listZip(buf, limits);
  return summarise(format, counter);
}

/**
 * Unpacks `buf` into `dest` (which must exist and be empty) after listing it; returns the listing.
 * Files are written 0644 and folders 0755 whatever the archive says.
 */
export async function extractSuiteArchive(
  buf: Uint8Array,
  dest: string,
  limits: SuiteArchiveLimits,
): Promise<SuiteArchiveListing> {
  const listing = await listSuiteArchive(buf, limits);
  const root = path.resolve(dest);
  if (listing.format === 'tar.gz') await extractTar(buf, root, listing, limits);
  else await extractZip(buf, root, listing, limits);
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
  if (!files.includes(layout.workingDir ? `${layout.workingDir}/package.json` : 'package.json'))
    problems.push(`no package.json ${where}`);
  if (!layout.lockfile) problems.push(`no lockfile (${LOCKFILES.join(', ')}) ${where} or above it`);
  if (!layout.configFile) problems.push(`no Playwright config (${PLAYWRIGHT_CONFIG_NAMES.join(', ')}) ${where}`);
  return problems;
}
