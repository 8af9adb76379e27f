/**
 * Scrubs a Playwright trace (a zip) before it leaves the agent. A trace holds the page as the
 * script saw it: DOM snapshots, console messages, every request and response with headers and
 * bodies, action parameters (what was typed). Its text entries — the `.trace`/`.network`/`.stacks`
 * NDJSON files and text resources (HTML, JSON, scripts) — go through the job's Scrubber; NDJSON
 * lines are parsed so sensitive headers are redacted whatever their value (Scrubber.scrubDeep).
 * Binary entries (screenshots, images, fonts) are copied as they are. Read with yauzl and written
 * with yazl, one entry at a time.
 */
import { rename } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import yauzl from 'yauzl';
import type yazl from 'yazl';
import { writeZipFile } from '../artifacts/zip-stream.ts';
import type { Scrubber } from '../scrub/scrubber.ts';

/** An entry bigger than this is copied without scrubbing (a video or a huge image in the trace). */
const MAX_SCRUB_ENTRY_BYTES = 64 * 1024 * 1024;

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

/** Copies every file entry of `zip` into `out`, its text scrubbed. */
async function copyScrubbed(zip: yauzl.ZipFile, out: yazl.ZipFile, scrubber: Scrubber): Promise<void> {
  for await (const entry of zip.eachEntry()) {
    if (entry.fileName.endsWith('/')) continue;
    const data = await buffer(await zip.openReadStreamPromise(entry));
    const text = data.length <= MAX_SCRUB_ENTRY_BYTES ? asText(data) : null;
    const body = text === null ? data : Buffer.from(scrubTraceEntry(entry.fileName, text, scrubber), 'utf8');
    out.addBuffer(body, entry.fileName, { mtime: entry.getLastModDate(), compress: text !== null });
  }
}

/** Rewrites the trace at `file` in place with its text entries scrubbed. */
export async function scrubTraceZip(file: string, scrubber: Scrubber): Promise<void> {
  const zip = await yauzl.openPromise(file, { lazyEntries: true, autoClose: true });
  const temp = `${file}.scrubbed`;
  try {
    await writeZipFile(temp, (out) => copyScrubbed(zip, out, scrubber));
  } finally {
    zip.close();
  }
  await rename(temp, file);
}
