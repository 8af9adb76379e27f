/**
 * Zips the agent writes (a suite's HTML report, a scrubbed trace), as streams with yazl: zlib
 * deflates each entry off the event loop and the bytes go out as they come, so a large artifact
 * neither sits whole in memory nor holds up the agent's timers (its liveness probe among them).
 */
import { createWriteStream } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';

export type ZipFiller = (zip: yazl.ZipFile) => Promise<void> | void;

/** Streams into `sink` the zip whose entries `fill` adds; resolves once all of it is written. */
export async function streamZip(sink: Writable, fill: ZipFiller): Promise<void> {
  const zip = new yazl.ZipFile();
  const output = zip.outputStream as Readable;
  const written = pipeline(output, sink);
  // yazl reports a file it cannot read on the ZipFile, not on its output: end the output with it.
  zip.on('error', (err) => output.destroy(err));
  try {
    await fill(zip);
  } catch (err) {
    output.destroy(err as Error);
    await written.catch(() => {});
    throw err;
  }
  zip.end();
  await written;
}

/** Writes the zip whose entries `fill` adds to the file `target`. */
export function writeZipFile(target: string, fill: ZipFiller): Promise<void> {
  return streamZip(createWriteStream(target), fill);
}
