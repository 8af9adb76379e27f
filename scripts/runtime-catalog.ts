/**
 * `node scripts/runtime-catalog.ts`: writes src/service/runtime-catalog.json, what GET /v1/runtimes
 * serves, from the folders under runtimes/ (their package.json and package-lock.json). Run it after
 * changing a runtime; test/service/reference-reads.test.ts fails until then.
 */
import { writeFileSync } from 'node:fs';
import { CATALOG_FILE, listRuntimes, packageRuntimesDir } from '../src/service/runtime-catalog.ts';

const runtimes = await listRuntimes(packageRuntimesDir());
writeFileSync(CATALOG_FILE, `${JSON.stringify(runtimes, null, 2)}\n`);
process.stdout.write(`wrote ${runtimes.length} runtime(s) to ${CATALOG_FILE}\n`);
