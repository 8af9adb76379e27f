/** Zips built in memory for tests, with the agent's own zip library (yazl). */
import { buffer } from 'node:stream/consumers';
import yazl from 'yazl';

/** A zip of these entries; a name ending in `/` is a folder entry. */
export async function zipBuffer(entries: Record<string, string | Uint8Array>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, data] of Object.entries(entries)) {
    if (name.endsWith('/')) zip.addEmptyDirectory(name);
    else zip.addBuffer(Buffer.from(data), name);
  }
  zip.end();
  return buffer(zip.outputStream);
}
