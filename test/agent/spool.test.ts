import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ResultSpool } from '../../src/agent/spool.ts';
import type { SubmitResultRequest } from '../../src/shared/protocol.ts';
import { passingRunResult } from '../support/results-run-result.ts';
import { recordingLogger, tempDir } from './helpers.ts';

function item(runId: string, pad = 0): SubmitResultRequest {
  const result = passingRunResult({
    runId,
    checkId: 'c1',
    startedAt: '2026-01-01T00:00:00.000Z',
    stoppedAt: '2026-01-01T00:00:01.000Z',
    responseTime: 1000,
    error: pad > 0 ? 'x'.repeat(pad) : null,
    agent: { id: 'a', version: '0' },
  });
  return { agentId: 'a', leaseId: `lease-${runId}`, result };
}

async function drain(spool: ResultSpool): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of spool.entries()) {
    out.push(entry.item.result.runId);
    await spool.ack(entry.seq);
  }
  return out;
}

describe('ResultSpool', () => {
  it('keeps results in order and removes them on ack', async () => {
    const { log } = recordingLogger();
    const spool = await ResultSpool.open({ dir: tempDir(), maxBytes: 1_000_000, log });
    for (const id of ['r1', 'r2', 'r3']) await spool.append(item(id));
    expect(spool.size).toBe(3);
    const head = await spool.peek();
    expect(head?.item.result.runId).toBe('r1');
    expect(head?.item.leaseId).toBe('lease-r1');
    // peek does not remove
    expect((await spool.peek())?.seq).toBe(head?.seq);
    expect(await drain(spool)).toEqual(['r1', 'r2', 'r3']);
    expect(spool.size).toBe(0);
    expect(spool.bytes).toBe(0);
    expect(await spool.peek()).toBeUndefined();
  });

  it('survives a restart and resumes the sequence after the files present', async () => {
    const dir = tempDir();
    const { log } = recordingLogger();
    const first = await ResultSpool.open({ dir, maxBytes: 1_000_000, log });
    await first.append(item('r1'));
    await first.append(item('r2'));
    const seq2 = (await first.peek())?.seq ?? 0;
    await first.ack(seq2); // r1 delivered before the "crash"

    const second = await ResultSpool.open({ dir, maxBytes: 1_000_000, log });
    expect(second.size).toBe(1);
    const seq = await second.append(item('r3'));
    expect(seq).toBe(3); // never reuses a number, so order by name stays the order of arrival
    expect(await drain(second)).toEqual(['r2', 'r3']);
  });

  it('names files by zero-padded sequence', async () => {
    const dir = tempDir();
    const spool = await ResultSpool.open({ dir, maxBytes: 1_000_000, log: recordingLogger().log });
    await spool.append(item('r1'));
    expect(readdirSync(dir)).toEqual(['0000000000000001.json']);
  });

  it('drops the OLDEST when full, logs each drop with its runId and counts it', async () => {
    const recorder = recordingLogger();
    const one = Buffer.byteLength(JSON.stringify(item('r0', 400)));
    const spool = await ResultSpool.open({ dir: tempDir(), maxBytes: one * 3, log: recorder.log });
    for (const id of ['r1', 'r2', 'r3', 'r4', 'r5']) await spool.append(item(id, 400));
    expect(spool.size).toBe(3);
    expect(spool.bytes).toBeLessThanOrEqual(one * 3);
    expect(spool.droppedTotal).toBe(2);
    const drops = recorder.lines.filter((l) => l.level === 50);
    expect(drops.map((l) => l.runId)).toEqual(['r1', 'r2']);
    expect(String(drops[0]?.msg)).toMatch(/DROPPED/);
    expect(await drain(spool)).toEqual(['r3', 'r4', 'r5']);
  });

  it('drops a single result larger than the whole bound and counts it', async () => {
    const recorder = recordingLogger();
    const spool = await ResultSpool.open({ dir: tempDir(), maxBytes: 200, log: recorder.log });
    expect(await spool.append(item('huge', 1_000))).toBe(0);
    expect(spool.size).toBe(0);
    expect(spool.droppedTotal).toBe(1);
    expect(recorder.lines.some((l) => l.level === 50 && l.runId === 'huge')).toBe(true);
  });

  it('keeps call order for concurrent appends', async () => {
    const spool = await ResultSpool.open({ dir: tempDir(), maxBytes: 10_000_000, log: recordingLogger().log });
    const ids = Array.from({ length: 40 }, (_, i) => `r${i}`);
    await Promise.all(ids.map((id) => spool.append(item(id))));
    expect(spool.size).toBe(40);
    expect(await drain(spool)).toEqual(ids);
  });

  it('removes leftovers of interrupted writes and ignores foreign files', async () => {
    const dir = tempDir();
    const { log } = recordingLogger();
    const spool = await ResultSpool.open({ dir, maxBytes: 1_000_000, log });
    await spool.append(item('r1'));
    // A crash between write and rename leaves a half-written temp file behind.
    writeFileSync(join(dir, '.0000000000000002.json.abcd.tmp'), '{"agentId":"a","leas');
    writeFileSync(join(dir, 'README'), 'not a result');
    const reopened = await ResultSpool.open({ dir, maxBytes: 1_000_000, log });
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect(reopened.size).toBe(1);
    expect(await reopened.append(item('r2'))).toBe(2);
    expect(await drain(reopened)).toEqual(['r1', 'r2']);
  });

  it('skips a corrupt file instead of stalling delivery', async () => {
    const dir = tempDir();
    const recorder = recordingLogger();
    const spool = await ResultSpool.open({ dir, maxBytes: 1_000_000, log: recorder.log });
    await spool.append(item('r1'));
    await spool.append(item('r2'));
    writeFileSync(join(dir, '0000000000000001.json'), '{broken');
    expect(await drain(spool)).toEqual(['r2']);
    expect(recorder.lines.some((l) => l.level === 50)).toBe(true);
    // A result removed unread is a result lost: it counts like one dropped for the bound.
    expect(spool.droppedTotal).toBe(1);
  });

  it('removes and counts an entry that is JSON but not a result, rather than handing it to the deliverer', async () => {
    const dir = tempDir();
    const spool = await ResultSpool.open({ dir, maxBytes: 1_000_000, log: recordingLogger().log });
    await spool.append(item('r1'));
    await spool.append(item('r2'));
    await spool.append(item('r3'));
    writeFileSync(join(dir, '0000000000000001.json'), '{"agentId":"a"}');
    writeFileSync(join(dir, '0000000000000002.json'), 'null');
    expect(await drain(spool)).toEqual(['r3']);
    expect(spool.droppedTotal).toBe(2);
  });

  it('ack of an entry that was dropped meanwhile is harmless', async () => {
    const spool = await ResultSpool.open({ dir: tempDir(), maxBytes: 1_000_000, log: recordingLogger().log });
    const seq = await spool.append(item('r1'));
    await spool.ack(seq);
    await expect(spool.ack(seq)).resolves.toBeUndefined();
  });
});
