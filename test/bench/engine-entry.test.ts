import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeEngineEntry } from '../../scripts/bench/_engine.ts';

describe('the protocol benchmarks engine entry (scripts/bench/_engine.ts)', () => {
  let root = '';
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('is written in a fresh clone, where the git-ignored .bench/ folder does not exist yet', () => {
    root = `${mkdtempSync(join(tmpdir(), 'bench-fresh-clone-'))}/`;
    expect(existsSync(join(root, '.bench'))).toBe(false);
    const entry = writeEngineEntry(root);
    expect(entry).toBe(join(root, '.bench', 'engine.mjs'));
    // Types stripped: plain JavaScript that Node runs without a loader.
    const text = readFileSync(entry, 'utf8');
    expect(text).toContain('export async function closedLoop');
    expect(text).not.toMatch(/\): Promise<SideResult>/);
  });
});
