/**
 * The agent's artifact uploader against a real service on loopback (buildService), with files the
 * test writes: a 150 MB upload, an upload cut mid-way by a TCP relay and resumed, the size cap, an
 * outage and restart, the queue bound, refusals, and the text scrubbing seam.
 */
import { createHash } from 'node:crypto';
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pino from 'pino';
import { Agent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ArtifactHttp } from '../../src/agent/artifacts/http.ts';
import { LineScrubber } from '../../src/agent/artifacts/scrub.ts';
import { ArtifactUploader } from '../../src/agent/artifacts/uploader.ts';
import type { BackoffOptions } from '../../src/agent/backoff.ts';
import {
  type ArtifactServiceHarness,
  type ArtifactTenant,
  startArtifactService,
  startRelay,
  writeRandomFile,
} from '../helpers/artifact-service.ts';

const MiB = 1024 * 1024;

let h: ArtifactServiceHarness;
let work: string;
const closers: Array<() => Promise<unknown>> = [];

beforeEach(() => {
  work = mkdtempSync(path.join(tmpdir(), 'outpost-agent-artifacts-'));
});
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
  await h?.close();
  rmSync(work, { recursive: true, force: true });
});

/** A pino logger whose lines the test can read. */
function captureLog() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split('\n').filter(Boolean))
          lines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    }),
  );
  return { log, lines };
}

async function openUploader(opts: {
  apiUrl: string;
  key: string;
  maxBytes?: number;
  queueMaxBytes?: number;
  queueDir?: string;
  log?: pino.Logger;
  backoff?: BackoffOptions;
  segmentMs?: number;
  chunkBytes?: number;
}) {
  const dispatcher = new Agent({ keepAliveTimeout: 1_000 });
  const uploader = await ArtifactUploader.open({
    config: {
      maxBytes: opts.maxBytes ?? 150 * MiB,
      queueDir: opts.queueDir ?? path.join(work, 'spool', 'artifacts'),
      queueMaxBytes: opts.queueMaxBytes ?? 2048 * MiB,
    },
    http: new ArtifactHttp({ apiUrl: new URL(opts.apiUrl), apiKey: opts.key, dispatcher }),
    log: opts.log ?? pino({ level: 'silent' }),
    backoff: opts.backoff ?? { baseMs: 20, capMs: 200 },
    ...(opts.segmentMs === undefined ? {} : { segmentMs: opts.segmentMs }),
    ...(opts.chunkBytes === undefined ? {} : { chunkBytes: opts.chunkBytes }),
  });
  closers.push(async () => {
    await uploader.close();
    await dispatcher.close();
  });
  return uploader;
}

function uploaded(uploader: ArtifactUploader, name: string): Promise<void> {
  return new Promise((resolve) => {
    const on = (e: { name: string }) => {
      if (e.name !== name) return;
      uploader.off('uploaded', on);
      resolve();
    };
    uploader.on('uploaded', on);
  });
}

async function storedSha(t: ArtifactTenant, runId: string, name: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path.join(h.dataDir, 'artifacts', t.accountId, runId, name)), hash);
  return hash.digest('hex');
}

/** The artifact requests that reach the service from now on: method, declared length, chunked or not. */
function recordBodies(): Array<{ method: string; contentLength: string | undefined; chunked: boolean }> {
  const seen: Array<{ method: string; contentLength: string | undefined; chunked: boolean }> = [];
  h.service.app.server.on('request', (req: IncomingMessage) => {
    if (req.method !== 'PUT' && req.method !== 'PATCH') return;
    seen.push({
      method: req.method,
      contentLength: req.headers['content-length'],
      chunked: /chunked/i.test(req.headers['transfer-encoding'] ?? ''),
    });
  });
  return seen;
}

/** Uploads a 3 MiB + 12,345 byte file with these uploader options; checks it arrived intact. */
async function uploadReport(opts: { segmentMs?: number; chunkBytes: number }) {
  const t = await h.tenant();
  const runId = await h.run(t);
  const size = 3 * MiB + 12_345;
  const file = path.join(work, 'report.bin');
  const sha = await writeRandomFile(file, size);
  const bodies = recordBodies();
  const uploader = await openUploader({ apiUrl: h.url, key: t.key, ...opts });
  const done = uploaded(uploader, 'report.bin');
  await uploader.add(runId, { name: 'report.bin', kind: 'other', path: file, contentType: 'application/octet-stream' });
  await done;
  expect(await storedSha(t, runId, 'report.bin')).toBe(sha);
  return { size, bodies, uploader };
}

describe('uploads to a real service', () => {
  beforeEach(async () => {
    h = await startArtifactService();
  });

  it('streams a 150 MB artifact that arrives intact', { timeout: 120_000 }, async () => {
    const t = await h.tenant();
    const runId = await h.run(t);
    const file = path.join(work, 'video.webm');
    const sha = await writeRandomFile(file, 150 * MiB);
    const uploader = await openUploader({ apiUrl: h.url, key: t.key });
    const done = uploaded(uploader, 'video.webm');
    const added = await uploader.add(runId, {
      name: 'video.webm',
      kind: 'video',
      path: file,
      contentType: 'video/webm',
    });
    expect(added).toEqual({
      ok: true,
      ref: { name: 'video.webm', kind: 'video', contentType: 'video/webm', size: 150 * MiB, sha256: sha },
    });
    await done;
    expect(await storedSha(t, runId, 'video.webm')).toBe(sha);
    expect(await h.service.store.artifacts.get(t.accountId, runId, 'video.webm')).toMatchObject({
      complete: true,
      size: 150 * MiB,
      sha256: sha,
    });
    expect(h.service.artifacts.bytesReceived).toBe(150 * MiB);
    // Uploaded means gone from the queue, data and metadata.
    expect(await readdir(path.join(work, 'spool', 'artifacts'))).toEqual([]);
  });

  it('resumes an upload cut mid-way from the offset the service holds, sending each byte once', {
    timeout: 60_000,
  }, async () => {
    const t = await h.tenant();
    const runId = await h.run(t);
    const size = 40 * MiB;
    const file = path.join(work, 'trace.zip');
    const sha = await writeRandomFile(file, size);
    const relay = await startRelay(Number(new URL(h.url).port), 15 * MiB);
    closers.push(relay.close);
    const { log, lines } = captureLog();
    const uploader = await openUploader({ apiUrl: relay.url, key: t.key, log });
    const done = uploaded(uploader, 'trace.zip');
    await uploader.add(runId, { name: 'trace.zip', kind: 'trace', path: file, contentType: 'application/zip' });
    await done;

    expect(relay.state.cuts).toBe(1);
    expect(await storedSha(t, runId, 'trace.zip')).toBe(sha);
    // The service took every byte exactly once ...
    expect(h.service.artifacts.bytesReceived).toBe(size);
    // ... and the wire carried little more than the file: the resume did not start over. (Headers,
    // plus whatever was in flight in socket buffers when the connection died.)
    expect(relay.state.clientBytes).toBeGreaterThanOrEqual(size);
    expect(relay.state.clientBytes).toBeLessThan(size + 4 * MiB);
    expect(uploader.failedAttemptsTotal).toBeGreaterThanOrEqual(1);
    const failure = lines.find((l) => l.msg === 'artifact upload failed; will retry');
    expect(failure).toMatchObject({ runId, artifact: 'trace.zip' });
    // The first request (a PUT of one chunk) went through; the cut came in the PATCH after it.
    expect(String(failure?.reason)).toMatch(/PATCH \/agent\/v1\/runs\/.+\/artifacts\/trace\.zip/);
  });

  it('declares each request\u2019s length, one chunk first and then sized from the rate it measured', async () => {
    // 256 KiB on loopback takes milliseconds: five minutes' worth at that rate (half of segmentMs)
    // is more than the rest, however busy the machine.
    const { size, bodies } = await uploadReport({ segmentMs: 600_000, chunkBytes: 256 * 1024 });
    expect(bodies).toEqual([
      { method: 'PUT', contentLength: String(256 * 1024), chunked: false },
      { method: 'PATCH', contentLength: String(size - 256 * 1024), chunked: false },
    ]);
  });

  it('uploads an empty artifact as one PUT of length 0', async () => {
    const t = await h.tenant();
    const runId = await h.run(t);
    const file = path.join(work, 'empty.log');
    await writeFile(file, '');
    const bodies = recordBodies();
    const uploader = await openUploader({ apiUrl: h.url, key: t.key });
    const done = uploaded(uploader, 'empty.log');
    await uploader.add(runId, { name: 'empty.log', kind: 'other', path: file, contentType: 'text/plain' });
    await done;

    expect(await h.service.store.artifacts.get(t.accountId, runId, 'empty.log')).toMatchObject({
      complete: true,
      size: 0,
    });
    expect(bodies).toEqual([{ method: 'PUT', contentLength: '0', chunked: false }]);
  });

  it('with segmentMs 0 sends one chunk per request, PATCH after PATCH: every byte arrives once', {
    timeout: 60_000,
  }, async () => {
    // segmentMs 0: no time for more than the smallest request, one chunk.
    const { size, bodies, uploader } = await uploadReport({ segmentMs: 0, chunkBytes: 256 * 1024 });
    expect(h.service.artifacts.bytesReceived).toBe(size);
    expect(uploader.failedAttemptsTotal).toBe(0);
    expect(bodies).toHaveLength(13);
    expect(bodies.slice(0, 12).every((b) => b.contentLength === String(256 * 1024))).toBe(true);
    expect(bodies[12]).toEqual({ method: 'PATCH', contentLength: '12345', chunked: false });
  });

  it('leaves an artifact over ARTIFACT_MAX_BYTES out with a note, and the verdict stands', async () => {
    const t = await h.tenant();
    const runId = await h.run(t);
    const big = path.join(work, 'video.webm');
    await writeRandomFile(big, 2 * MiB);
    const small = path.join(work, 'shot.png');
    await writeFile(small, Buffer.from('png bytes'));
    const { log, lines } = captureLog();
    const uploader = await openUploader({ apiUrl: h.url, key: t.key, maxBytes: MiB, log });
    const run = uploader.forRun(runId);
    const done = uploaded(uploader, 'shot.png');
    expect((await run.add({ name: 'video.webm', kind: 'video', path: big, contentType: 'video/webm' })).ok).toBe(false);
    expect((await run.add({ name: 'shot.png', kind: 'screenshot', path: small, contentType: 'image/png' })).ok).toBe(
      true,
    );
    const details = run.details();
    expect(details.artifactNotes).toEqual([
      {
        name: 'video.webm',
        kind: 'video',
        size: 2 * MiB,
        message: `left out: ${2 * MiB} bytes is over the artifact size limit of ${MiB} bytes (ARTIFACT_MAX_BYTES); the check's verdict is unaffected`,
      },
    ]);
    expect(details.artifacts?.map((a) => a.name)).toEqual(['shot.png']);
    expect(lines.find((l) => l.msg === 'artifact left out of the result')).toMatchObject({
      runId,
      artifact: 'video.webm',
    });

    const resultId = await h.submitResult(t, runId, details, { hasFailures: false });
    await done;
    const page = await h.service.store.results.list(t.accountId, t.check.id, { limit: 10 });
    const stored = page.entries.find((r) => r.id === resultId);
    expect(stored?.payload).toMatchObject({
      hasFailures: false,
      hasErrors: false,
      details: { artifactNotes: details.artifactNotes },
    });
    expect(await h.service.store.artifacts.get(t.accountId, runId, 'video.webm')).toBeUndefined();
    const manifest = await fetch(`${h.url}/v1/check-results/${t.check.id}/${resultId}/assets`, { headers: t.headers });
    expect(((await manifest.json()) as { assets: Array<{ name: string }> }).assets.map((a) => a.name)).toEqual([
      'shot.png',
    ]);
  });

  it('scrubs the job\u2019s secrets out of a text artifact before it leaves the agent; binaries pass untouched', async () => {
    const t = await h.tenant();
    const runId = await h.run(t);
    const secret = 'hunter2-very-secret';
    const log = path.join(work, 'console.log');
    await writeFile(
      log,
      `login as admin\npassword=${secret}\nauthorization: Bearer ${Buffer.from(secret).toString('base64')}\n`,
    );
    const bin = path.join(work, 'raw.bin');
    await writeFile(bin, `binary ${secret}`);
    const uploader = await openUploader({ apiUrl: h.url, key: t.key });
    const run = uploader.forRun(runId, { environmentVariables: [{ key: 'PASSWORD', value: secret, secret: true }] });
    await run.add({ name: 'console.log', kind: 'log', path: log, contentType: 'text/plain' });
    await run.add({ name: 'raw.bin', kind: 'other', path: bin, contentType: 'application/octet-stream' });
    await uploader.idle();
    const stored = await readFile(path.join(h.dataDir, 'artifacts', t.accountId, runId, 'console.log'), 'utf8');
    expect(stored).toContain('login as admin\n');
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(Buffer.from(secret).toString('base64'));
    expect(await readFile(path.join(h.dataDir, 'artifacts', t.accountId, runId, 'raw.bin'), 'utf8')).toBe(
      `binary ${secret}`,
    );
  });

  it('drops an artifact the service refuses for good, logging why', async () => {
    const t = await h.tenant();
    const file = path.join(work, 'log.txt');
    await writeFile(file, 'hello\n');
    const { log, lines } = captureLog();
    const uploader = await openUploader({ apiUrl: h.url, key: t.key, log });
    const dropped = new Promise<{ reason: string }>((resolve) => uploader.once('dropped', resolve));
    await uploader.add(crypto.randomUUID(), { name: 'log.txt', kind: 'log', path: file, contentType: 'text/plain' });
    expect((await dropped).reason).toMatch(/404 Run .* not found for this location/);
    expect(uploader.droppedTotal).toBe(1);
    expect(lines.find((l) => String(l.msg).startsWith('ARTIFACT DROPPED'))).toMatchObject({
      artifact: 'log.txt',
      level: 50,
    });
  });
});

describe('outages', () => {
  it('keeps uploads queued on disk through an outage and a restart of the agent, then completes them', {
    timeout: 60_000,
  }, async () => {
    h = await startArtifactService();
    const t = await h.tenant();
    const runId = await h.run(t);
    const file = path.join(work, 'report.html');
    // Text: it goes through the scrubbing seam on its way into the queue.
    await writeFile(file, '<html>\n<p>report</p>\n</html>\n');
    const sha = createHash('sha256').update('<html>\n<p>report</p>\n</html>\n').digest('hex');
    await h.stop();

    const { log, lines } = captureLog();
    const first = await openUploader({ apiUrl: h.url, key: t.key, log });
    const failing = new Promise<void>((resolve) => {
      let n = 0;
      first.on('attempt-failed', () => {
        if (++n === 2) resolve();
      });
    });
    expect(
      await first.add(runId, { name: 'report.html', kind: 'report', path: file, contentType: 'text/html' }),
    ).toMatchObject({ ok: true });
    await failing;
    expect(
      lines
        .filter((l) => l.msg === 'artifact upload failed; will retry')
        .every((l) => /ECONNREFUSED/.test(String(l.reason))),
    ).toBe(true);
    // The agent stops while the service is down: the artifact stays on disk.
    await closers.pop()?.();
    await rmSync(file);

    await h.restart();
    const second = await openUploader({ apiUrl: h.url, key: t.key });
    expect(second.queue.size).toBe(1);
    await second.idle();
    expect(second.uploadedTotal).toBe(1);
    expect(await storedSha(t, runId, 'report.html')).toBe(sha);
  });

  it('retries an unreachable service within the short cap, so uploads resume within seconds of its return', async () => {
    h = await startArtifactService();
    const t = await h.tenant();
    const runId = await h.run(t);
    const file = path.join(work, 'shot.png');
    await writeFile(file, Buffer.alloc(1024, 7));
    await h.stop();
    const { log, lines } = captureLog();
    // A long cap for answers, a short one for no answer: only the short one may apply here.
    const uploader = await openUploader({
      apiUrl: h.url,
      key: t.key,
      log,
      backoff: { baseMs: 1_000, capMs: 60_000, unreachableCapMs: 100 },
    });
    const failed = new Promise<void>((resolve) => {
      let n = 0;
      uploader.on('attempt-failed', () => {
        if (++n === 4) resolve();
      });
    });
    await uploader.add(runId, { name: 'shot.png', kind: 'screenshot', path: file, contentType: 'image/png' });
    await failed;
    const delays = lines.filter((l) => l.msg === 'artifact upload failed; will retry').map((l) => Number(l.retryInMs));
    expect(delays.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...delays)).toBeLessThanOrEqual(100);
  });

  it('bounds the queue: the oldest waiting artifact is dropped, logged loudly and counted', async () => {
    h = await startArtifactService();
    const t = await h.tenant();
    const runId = await h.run(t);
    await h.stop();
    const { log, lines } = captureLog();
    const uploader = await openUploader({ apiUrl: h.url, key: t.key, log, maxBytes: MiB, queueMaxBytes: 2 * MiB + 10 });
    for (const name of ['a.bin', 'b.bin', 'c.bin']) {
      const file = path.join(work, name);
      await writeRandomFile(file, MiB);
      await uploader.add(runId, { name, kind: 'other', path: file });
    }
    expect(uploader.queue.size).toBe(2);
    expect(uploader.droppedTotal).toBe(1);
    expect(lines.find((l) => String(l.msg).startsWith('ARTIFACT DROPPED: the artifact queue is full'))).toMatchObject({
      name: 'a.bin',
      level: 50,
    });
  });
});

describe('text scrubbing seam', () => {
  it('scrubs line by line and keeps line endings, across chunk boundaries', async () => {
    const chunks = ['token=abc', 'SECRET\nplain line\r\n', 'last token=', 'SECRET'].map((s) => Buffer.from(s));
    const out: Buffer[] = [];
    await pipeline(
      Readable.from(chunks),
      new LineScrubber((line) => line.replaceAll('abcSECRET', '***').replaceAll('token=SECRET', 'token=***')),
      new Writable({
        write(c: Buffer, _e, done) {
          out.push(c);
          done();
        },
      }),
    );
    expect(Buffer.concat(out).toString()).toBe('token=***\nplain line\r\nlast token=***');
  });
});
