import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PartialHashes } from '../../src/service/artifacts/partial-hashes.ts';

describe('PartialHashes', () => {
  it('gives a kept hash back once, only for the same upload at the same offset', () => {
    const hashes = new PartialHashes();
    const hash = createHash('sha256').update('abc');
    hashes.keep('a/r/v.webm', 'g1', 3, hash);
    expect(hashes.take('a/r/v.webm', 'g1', 3)).toBe(hash);
    expect(hashes.take('a/r/v.webm', 'g1', 3)).toBeUndefined();
    hashes.keep('a/r/v.webm', 'g1', 3, hash);
    expect(hashes.take('a/r/v.webm', 'g2', 3)).toBeUndefined();
    hashes.keep('a/r/v.webm', 'g1', 3, hash);
    expect(hashes.take('a/r/v.webm', 'g1', 4)).toBeUndefined();
    expect(hashes.size).toBe(0);
  });

  it('holds at most its bound, dropping the entry kept longest ago', () => {
    const hashes = new PartialHashes(2);
    for (const key of ['one', 'two', 'three']) hashes.keep(key, 'g', 1, createHash('sha256'));
    expect(hashes.size).toBe(2);
    expect(hashes.take('one', 'g', 1)).toBeUndefined();
    expect(hashes.take('two', 'g', 1)).toBeDefined();
    expect(hashes.take('three', 'g', 1)).toBeDefined();
  });
});
