/**
 * Suite archives that unpack to far more than they weigh, built in milliseconds for tests:
 *  - tar.gz: a gzip file may hold several members, so one small member (a tar header, or a whole
 *    real suite) is followed by the same precompressed member of 1 MiB of zeros, many times over;
 *  - zip: one deflated entry whose body is the same flushed 1 MiB-of-zeros deflate block repeated
 *    (a full flush byte-aligns each block and resets the dictionary, so copies chain), then a final
 *    empty block.
 * Also a maximal legal archive: one file of exactly the unpacked cap plus the project files.
 * Memory is measured by the peak RSS of this process (VmHWM), reset before the measured step.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import zlib from 'node:zlib';
import * as tar from 'tar';

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

/** Starts a peak-RSS measurement of this process; the function returned gives the growth in bytes. */
export function measurePeakRss(): () => number {
  const kib = (field: string) =>
    Number(readFileSync('/proc/self/status', 'utf8').match(new RegExp(`${field}:\\s+(\\d+) kB`))?.[1]) * 1024;
  // Writing 5 resets the peak (VmHWM) to the current RSS.
  writeFileSync('/proc/self/clear_refs', '5');
  const before = kib('VmRSS');
  return () => kib('VmHWM') - before;
}
