/**
 * `npm run build` step two: copies the files tsc does not emit into dist/, keeping their paths.
 * Today that is the sandbox's child bootstrap (plain CommonJS run by each runtime's own Node, so it is
 * not compiled with the agent) and any other non-TypeScript file under src/.
 */
import { cpSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const COPIED = /\.(cjs|mjs|js|json|css|svg|png)$/;

let copied = 0;
for (const entry of readdirSync(path.join(root, 'src'), { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !COPIED.test(entry.name)) continue;
  const from = path.join(entry.parentPath, entry.name);
  const to = path.join(root, 'dist', path.relative(path.join(root, 'src'), from));
  cpSync(from, to);
  copied++;
}
process.stdout.write(`copied ${copied} asset file(s) into dist/\n`);
