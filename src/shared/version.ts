import { readFileSync } from 'node:fs';

/** The package version, read once from package.json (two folders up from src/shared and dist/shared). */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
