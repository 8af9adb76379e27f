/**
 * Scrubs a Playwright trace (a zip) before it leaves the agent. A trace holds the page as the
 * script saw it: DOM snapshots, console messages, every request and response with headers and
 * bodies, action parameters (what was typed). Its text entries — the `.trace`/`.network`/`.stacks`
 * NDJSON files and text resources (HTML, JSON, scripts) — go through the job's Scrubber; NDJSON
 * lines are parsed so sensitive headers are redacted whatever their value (Scrubber.scrubDeep).
 * Binary entries (screenshots, images, fonts) are copied as they are. Read with yauzl and written
 * with yazl, one entry at a time.
 */
import { createWriteStream } from 'node:fs';
import { rename } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import yazl from 'yazl';
import type { Scrubber } from '../scrub/scrubber.ts';

/** An entry bigger than this is copied without scrubbing (a video or a huge image in the trace). */
const MAX_SCRUB_ENTRY_BYTES = 64 * 1024 * 1024;

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, autoClose: true }, (err, zip) =>
      err || !zip ? reject(err ?? new Error('no zip')) : resolve(zip),
    );
  });
}

function readEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (err, stream) => {
      if (err || !stream) return reject(err ?? new Error('no stream'));
      const chunks: Buffer[] = [];
      (stream as Readable).on('data', (c: Buffer) => chunks.push(c));
      (stream as Readable).on('end', () => resolve(Buffer.concat(chunks)));
      (stream as Readable).on('error', reject);
    });
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The entry as text if it is text (valid UTF-8 without NUL bytes), else null. */
function asText(data: Buffer): string | null {
  if (data.includes(0)) return null;
  try {
    return utf8.decode(data);
  } catch {
    return null;
  }
}

/** One NDJSON line: parsed and scrubbed deeply when it is JSON, else scrubbed as text. */
function scrubLine(line: string, scrubber: Scrubber): string {
  if (line.trim() === '') return line;
  try {
    return JSON.stringify(scrubber.scrubDeep(JSON.parse(line) as unknown));
  } catch {
    return scrubber.scrubText(line);
  }
}

export function scrubTraceEntry(name: string, text: string, scrubber: Scrubber): string {
  if (/\.(trace|network|stacks)$/.test(name) || name.endsWith('.json')) {
    return text
      .split('\n')
      .map((l) => scrubLine(l, scrubber))
      .join('\n');
  }
  return scrubber.scrubText(text);
}

/** Rewrites the trace at `file` in place with its text entries scrubbed. */
export async function scrubTraceZip(file: string, scrubber: Scrubber): Promise<void> {
  const zip = await openZip(file);
  const out = new yazl.ZipFile();
  const temp = `${file}.scrubbed`;
  const written = pipeline(out.outputStream, createWriteStream(temp));
  await new Promise<void>((resolve, reject) => {
    zip.on('error', reject);
    zip.on('end', () => resolve());
    zip.on('entry', (entry: yauzl.Entry) => {
      if (entry.fileName.endsWith('/')) {
        zip.readEntry();
        return;
      }
      readEntry(zip, entry)
        .then((data) => {
          const text = data.length <= MAX_SCRUB_ENTRY_BYTES ? asText(data) : null;
          const body = text === null ? data : Buffer.from(scrubTraceEntry(entry.fileName, text, scrubber), 'utf8');
          out.addBuffer(body, entry.fileName, { mtime: entry.getLastModDate(), compress: text !== null });
          zip.readEntry();
        })
        .catch(reject);
    });
    zip.readEntry();
  });
  out.end();
  await written;
  await rename(temp, file);
}
