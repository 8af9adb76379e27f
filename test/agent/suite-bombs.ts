/**
 * Suite archives that unpack to far more than they weigh, built in milliseconds for tests:
 *  - tar.gz: a gzip file may hold several members, so one small member (a tar header, or a whole
 *    real suite) is followed by the same precompressed member of 1 MiB of zeros, many times over;
 *  - zip: one deflated entry whose body is the same flushed 1 MiB-of-zeros deflate block repeated
 *    (a full flush byte-aligns each block and resets the dictionary, so copies chain), then a final
 *    empty block.
 * Also a maximal legal archive: one file of exactly the unpacked cap plus the project files.
 * Memory is measured by the peak RSS of this process (VmHWM), reset before the measured step.
 * The agent's unpack step and the service's upload check are tested with the same bombs, project
 * and budgets, below.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import zlib from 'node:zlib';
import * as tar from 'tar';
import type { SuiteArchiveLimits } from '../../src/shared/suite-archive.ts';

export const MiB = 1024 * 1024;
const ZEROS = Buffer.alloc(MiB);
const GZIP_ZEROS = zlib.gzipSync(ZEROS);
const DEFLATE_ZEROS = zlib.deflateRawSync(ZEROS, { finishFlush: zlib.constants.Z_FULL_FLUSH });
/** A final, empty fixed-Huffman deflate block. */
const DEFLATE_END = Buffer.from([0x03, 0x00]);

function repeat(chunk: Buffer, times: number): Buffer[] {
  return Array.from({ length: times }, () => chunk);
}

/** A tar header (512 bytes) for a regular file of `size` bytes. */
export function tarHeader(name: string, size: number): Buffer {
  const block = Buffer.alloc(512);
  new tar.Header({ path: name, size, type: 'File', mode: 0o644, mtime: new Date(0) }).encode(block, 0);
  return block;
}

/** tar.gz: one file declaring `declaredBytes`, then `mib` MiB of zeros (its body, then more). */
export function tarGzBomb(mib: number, declaredBytes = mib * MiB): Buffer {
  return Buffer.concat([zlib.gzipSync(tarHeader('zeros.bin', declaredBytes)), ...repeat(GZIP_ZEROS, mib)]);
}

/** A real suite archive followed by `mib` MiB of zeros after its end-of-archive marker. */
export function trailingZerosBomb(suite: Buffer, mib: number): Buffer {
  return Buffer.concat([suite, ...repeat(GZIP_ZEROS, mib)]);
}

/**
 * tar.gz of the project files plus `zerosName`, so that the files add up to exactly `unpackedBytes`.
 * The zeros are written in 1 MiB pieces of the same member, plus one member for the remainder.
 */
export function maximalTarGz(
  projectFiles: Record<string, string>,
  unpackedBytes: number,
  zerosName = 'zeros.bin',
): Buffer {
  const parts: Buffer[] = [];
  let used = 0;
  for (const [name, text] of Object.entries(projectFiles)) {
    const body = Buffer.from(text);
    parts.push(tarHeader(name, body.length), body, Buffer.alloc((512 - (body.length % 512)) % 512));
    used += body.length;
  }
  const zeros = unpackedBytes - used;
  const members: Uint8Array[] = [zlib.gzipSync(Buffer.concat([...parts, tarHeader(zerosName, zeros)]))];
  members.push(...repeat(GZIP_ZEROS, Math.floor(zeros / MiB)));
  // The rest of the last body, its padding and the end-of-archive marker (two zero blocks).
  const rest = zeros % MiB;
  members.push(zlib.gzipSync(Buffer.alloc(rest + ((512 - (rest % 512)) % 512) + 1024)));
  return Buffer.concat(members);
}

interface ZipEntry {
  name: string;
  /** What the headers say the entry unpacks to. */
  declaredBytes: number;
  /** The deflated body. */
  body: Buffer;
}

/** A deflated body of `bytes` zeros. */
export function deflatedZeros(bytes: number): Buffer {
  const rest = zlib.deflateRawSync(Buffer.alloc(bytes % MiB), { finishFlush: zlib.constants.Z_FULL_FLUSH });
  return Buffer.concat([...repeat(DEFLATE_ZEROS, Math.floor(bytes / MiB)), rest, DEFLATE_END]);
}

/** A little-endian record of `length` bytes: [offset, width, value] fields, the rest zero. */
function record(length: number, fields: Array<[number, 2 | 4, number]>): Buffer {
  const b = Buffer.alloc(length);
  for (const [at, width, value] of fields) {
    if (width === 2) b.writeUInt16LE(value, at);
    else b.writeUInt32LE(value, at);
  }
  return b;
}

/** A zip of deflated entries with the sizes given (CRCs left 0: readers that stream do not check them). */
export function zipOf(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    // Signature, version needed, method 8 (deflate), compressed and uncompressed sizes, name length.
    const local = record(30, [
      [0, 4, 0x04034b50],
      [4, 2, 20],
      [8, 2, 8],
      [18, 4, e.body.length],
      [22, 4, e.declaredBytes],
      [26, 2, name.length],
    ]);
    const central = record(46, [
      [0, 4, 0x02014b50],
      [4, 2, 20],
      [6, 2, 20],
      [10, 2, 8],
      [20, 4, e.body.length],
      [24, 4, e.declaredBytes],
      [28, 2, name.length],
      [42, 4, offset],
    ]);
    locals.push(local, name, e.body);
    centrals.push(central, name);
    offset += local.length + name.length + e.body.length;
  }
  const cd = Buffer.concat(centrals);
  const end = record(22, [
    [0, 4, 0x06054b50],
    [8, 2, entries.length],
    [10, 2, entries.length],
    [12, 4, cd.length],
    [16, 4, offset],
  ]);
  return Buffer.concat([...locals, cd, end]);
}

/** Project files as stored zip entries' deflated bodies. */
export function zipProject(files: Record<string, string>, extra: ZipEntry[]): Buffer {
  const own = Object.entries(files).map(([name, text]) => ({
    name,
    declaredBytes: Buffer.byteLength(text),
    body: zlib.deflateRawSync(Buffer.from(text)),
  }));
  return zipOf([...own, ...extra]);
}

/** A zip of the project files plus one deflated file of zeros, adding up to exactly `unpackedBytes`. */
export function maximalZip(projectFiles: Record<string, string>, unpackedBytes: number): Buffer {
  const zeros = unpackedBytes - projectBytes(projectFiles);
  return zipProject(projectFiles, [{ name: 'zeros.bin', declaredBytes: zeros, body: deflatedZeros(zeros) }]);
}

/** What the project files unpack to. */
export function projectBytes(files: Record<string, string>): number {
  return Object.values(files).reduce((sum, text) => sum + Buffer.byteLength(text), 0);
}

/** Starts a peak-RSS measurement of this process; the function returned gives the growth in bytes. */
function measurePeakRss(): () => number {
  const kib = (field: string) =>
    Number(readFileSync('/proc/self/status', 'utf8').match(new RegExp(`${field}:\\s+(\\d+) kB`))?.[1]) * 1024;
  // Writing 5 resets the peak (VmHWM) to the current RSS.
  writeFileSync('/proc/self/clear_refs', '5');
  const before = kib('VmRSS');
  return () => kib('VmHWM') - before;
}

/** What `action` gave, how long it took and how much the peak RSS of this process grew meanwhile. */
export async function measured<T>(action: () => Promise<T>): Promise<{ result: T; ms: number; rss: number }> {
  const peak = measurePeakRss();
  const t0 = performance.now();
  const result = await action();
  return { result, ms: performance.now() - t0, rss: peak() };
}

/** The smallest project the agent and the service accept. */
export const SMALLEST_PROJECT: Readonly<Record<string, string>> = {
  'package.json': '{}',
  'package-lock.json': '{}',
  'playwright.config.ts': 'export default {};',
};

/** The caps the agent and the service use unless told otherwise. */
export const DEFAULT_CAPS: Readonly<SuiteArchiveLimits> = { maxEntries: 10_000, unpackedMaxBytes: 200 * MiB };

/** Well under what inflating a bomb in memory costs; room for the request itself and the heap. */
export const RSS_BUDGET = 64 * MiB;

/** How soon a bomb must be refused. */
export const REFUSAL_MS = 3_000;

export interface Bomb {
  format: 'tar.gz' | 'zip';
  archive: () => Buffer;
  /** The error refusing it under DEFAULT_CAPS, without the caller's prefix. */
  refusal: RegExp;
}

/** Archives of 1 GiB unpacked, each refused by a different check: rows for `it.each` of what the archive is (for titles) and the bomb. */
export const BOMBS: ReadonlyArray<readonly [string, Bomb]> = [
  [
    'a tar.gz whose entry declares (and carries) 1 GiB',
    {
      format: 'tar.gz',
      archive: () => tarGzBomb(1024),
      refusal: /the archive unpacks to more than 209715200 bytes \(SUITE_UNPACKED_MAX_BYTES\)/,
    },
  ],
  [
    'a real suite followed by 1 GiB of zeros after its end-of-archive marker',
    {
      format: 'tar.gz',
      archive: () => trailingZerosBomb(maximalTarGz(SMALLEST_PROJECT, 4096), 1024),
      refusal: /more than 1048576 bytes follow the end of the tar archive/,
    },
  ],
  [
    'a zip whose entry inflates to 1 GiB, past the 1 KiB its headers declare',
    {
      format: 'zip',
      archive: () =>
        zipProject(SMALLEST_PROJECT, [{ name: 'zeros.bin', declaredBytes: 1024, body: deflatedZeros(1024 * MiB) }]),
      refusal: /entry "zeros.bin" unpacks to more than the 1024 bytes its header declares/,
    },
  ],
];

/** `refusal` anchored at the start of the message, after `prefix` (a regular expression source). */
export function refusalAfter(prefix: string, refusal: RegExp): RegExp {
  return new RegExp(`^${prefix}${refusal.source}`);
}
