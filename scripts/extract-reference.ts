/**
 * `node scripts/extract-reference.ts [SOURCE]`: writes test/fixtures/reference/openapi-schemas.json, the
 * part of the reference OpenAPI document the contract tests read, from SOURCE (default
 * `../shared/reference/openapi-subset.json` beside the clone; its README says where that comes from).
 *
 * The extract is the document without its prose: `description`, `summary`, `example`, `examples` and
 * `externalDocs` are removed wherever they are keywords. Names, types, formats, enums, defaults,
 * bounds, required lists and references stay, so the tests need nothing outside the clone.
 * A property, status code or path that happens to be called `description` is a name, not prose, and
 * stays: the walk knows which objects map names to schemas.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const ROOT = path.resolve(fileURLToPath(new URL('.', import.meta.url)), '..');
export const REFERENCE_SOURCE = path.resolve(ROOT, '../shared/reference/openapi-subset.json');
export const REFERENCE_EXTRACT = path.join(ROOT, 'test/fixtures/reference/openapi-schemas.json');

const PROSE = new Set(['description', 'summary', 'example', 'examples', 'externalDocs']);
/** Keywords whose value is data, copied as it is (an enum value or a default may be any JSON). */
const DATA = new Set(['enum', 'default', 'const', 'required']);
/** Keywords whose value maps names (properties, paths, status codes, media types) to objects. */
const NAME_MAPS = new Set([
  'properties',
  'patternProperties',
  'definitions',
  '$defs',
  'paths',
  'responses',
  'content',
  'headers',
  'schemas',
  'securitySchemes',
  'parameters',
  'requestBodies',
]);

function isObject(value: Json): value is { [key: string]: Json } {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The reference document without its prose (see the file comment). */
export function extractReference(node: Json): Json {
  if (Array.isArray(node)) return node.map(extractReference);
  if (!isObject(node)) return node;
  const out: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(node)) {
    if (PROSE.has(key)) continue;
    if (DATA.has(key) || key.startsWith('x-')) out[key] = value;
    else if (NAME_MAPS.has(key) && isObject(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([name, v]) => [name, extractReference(v)]));
    else out[key] = extractReference(value);
  }
  return out;
}

/** The extract as it is written to the fixture: stable key order as in the source, one value per line. */
export function formatExtract(extract: Json): string {
  return `${JSON.stringify(extract, null, 1)}\n`;
}

if (import.meta.main) {
  const source = path.resolve(process.argv[2] ?? REFERENCE_SOURCE);
  const extract = extractReference(JSON.parse(readFileSync(source, 'utf8')) as Json);
  writeFileSync(REFERENCE_EXTRACT, formatExtract(extract));
  process.stdout.write(`wrote ${path.relative(process.cwd(), REFERENCE_EXTRACT)} from ${source}\n`);
}
