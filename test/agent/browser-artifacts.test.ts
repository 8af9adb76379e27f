/**
 * What a browser run's folder turns into: a trace that is cut short (the browser or the run ended
 * while Playwright wrote it) is left out with a note, since it cannot be scrubbed; a whole trace is
 * scrubbed and handed on. Neither fails the collection (CI once lost a run to a truncated trace).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import yazl from 'yazl';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { collectArtifacts } from '../../src/agent/browser/engine.ts';
import { REDACTED, Scrubber } from '../../src/agent/scrub/scrubber.ts';
import { KeepingSink, quietLog, zipText } from './browser-fixtures.ts';

const SECRET = 'hunter2-trace-secret';
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'outpost-browser-artifacts-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function traceZip(file: string): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  zip.addBuffer(Buffer.from(`${JSON.stringify({ type: 'action', params: { value: SECRET } })}\n`), 'trace.trace');
  zip.addBuffer(Buffer.alloc(4096, 7), 'resources/image.png', { compress: false });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const c of zip.outputStream) chunks.push(c as Buffer);
  const whole = Buffer.concat(chunks);
  writeFileSync(file, whole);
  return whole;
}

const ctx = (sink?: KeepingSink) => ({
  signal: new AbortController().signal,
  timeoutMs: 1000,
  log: quietLog,
  useOsDnsResolver: false,
  ...(sink ? { artifacts: sink } : {}),
});

it('leaves a truncated trace out with a note, and scrubs and keeps a whole one', async () => {
  const whole = await traceZip(path.join(dir, 'trace-a.zip'));
  writeFileSync(path.join(dir, 'trace-b.zip'), whole.subarray(0, Math.floor(whole.length / 2)));
  const sink = new KeepingSink(path.join(dir, 'kept'));

  const out = await collectArtifacts(dir, 'script', new Scrubber([SECRET]), ctx(sink));

  expect(sink.added.map((a) => path.basename(a.path))).toEqual(['trace-a.zip']);
  expect(out.traces).toEqual(['trace-1.zip']);
  const { text } = await zipText(sink.file('trace-1.zip'));
  expect(text).toContain(REDACTED);
  expect(text).not.toContain(SECRET);
  expect(sink.notes).toEqual([
    { name: 'trace-2.zip', kind: 'trace', message: expect.stringMatching(/incomplete.*could not be scrubbed/) },
  ]);
});

it('without a collector, a truncated trace is still a note of the result', async () => {
  writeFileSync(path.join(dir, 'trace.zip'), Buffer.from('PK\u0003\u0004 cut short'));
  const out = await collectArtifacts(dir, 'script', new Scrubber([SECRET]), ctx());
  expect(out.traces).toEqual([]);
  expect(out.details.artifactNotes?.map((n) => n.name)).toEqual(['trace-1.zip']);
  expect(readFileSync(path.join(dir, 'trace.zip'), 'utf8')).toContain('cut short');
});
