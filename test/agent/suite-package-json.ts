/**
 * The suite fixture's package.json (test/agent/suite-fixtures) with scripts or dependencies added:
 * what a suite test changes in it, the rest kept as the fixture's lockfiles expect.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES } from './suite-helpers.ts';

const { devDependencies, ...head } = JSON.parse(readFileSync(path.join(FIXTURES, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
};

/** The fixture's package.json text with `scripts`, and `devDependencies` beside the fixture's own. */
export function packageJsonWith(extra: {
  scripts?: Record<string, string>;
  devDependencies?: Record<string, string>;
}): string {
  return JSON.stringify({
    ...head,
    ...(extra.scripts ? { scripts: extra.scripts } : {}),
    devDependencies: { ...devDependencies, ...extra.devDependencies },
  });
}
