/**
 * Artifact uploads, the asset manifest and downloads against a real service (buildService on
 * loopback), with files the test writes. The agent's uploader is tested in test/agent/.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalDiskArtifactStore } from '../../src/service/artifacts/local-disk-store.ts';
import { UnsafeArtifactKeyError } from '../../src/service/artifacts/store.ts';
import { type ArtifactServiceHarness, type ArtifactTenant, startArtifactService } from '../helpers/artifact-service.ts';

let h: ArtifactServiceHarness;
let work: string;

beforeEach(() => {
  work = mkdtempSync(path.join(tmpdir(), 'outpost-artifact-files-'));
});
afterEach(async () => {
  await h?.close();
  rmSync(work, { recursive: true, force: true });
});

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function put(t: ArtifactTenant, runId: string, name: string, body: Buffer, headers: Record<string, string> = {}) {
  return fetch(`${h.url}/agent/v1/runs/${runId}/artifacts/${name}`, {
    method: 'PUT',
    headers: {
      authorization: `Bearer ${t.key}`,
      'content-type': 'image/png',
      'upload-length': String(body.length),
      'x-artifact-kind': 'screenshot',
      'x-artifact-sha256': sha(body),
      ...headers,
    },
    body: new Uint8Array(body),
  });
}

describe('uploads', () => {
  beforeEach(async () => {
    h = await startArtifactService({ ARTIFACT_MAX_BYTES: String(1024 * 1024) });
  });

  it('stores a streamed upload, reports its offset, lists it in the manifest and serves it to its account', async () => {
    const t = await h.tenant();
    const runId = await h.run(t);
    const png = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));
    const res = await put(t, runId, 'home.png', png);
    expect(res.status).toBe(200);
    expect(res.headers.get('upload-offset')).toBe('5000');
    expect(await res.json()).toMatchObject({
      name: 'home.png',
      kind: 'screenshot',
      size: 5000,
      received: 5000,
      complete: true,
      sha256: sha(png),
    });
    // On disk where the layout says, nowhere else.
    expect(existsSync(path.join(h.dataDir, 'artifacts', t.accountId, runId, 'home.png'))).toBe(true);

    const head = await fetch(`${h.url}/agent/v1/runs/${runId}/artifacts/home.png`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${t.key}` },
    });
    expect(head.status).toBe(200);
    expect(head.headers.get('upload-offset')).toBe('5000');
    expect(head.headers.get('upload-length')).toBe('5000');

    const resultId = await h.submitResult(t, runId, { artifacts: [{ name: 'home.png' }] });
    const manifest = await fetch(`${h.url}/v1/check-results/${t.check.id}/${resultId}/assets`, { headers: t.headers });
    expect(manifest.status).toBe(200);
    const body = (await manifest.json()) as { assets: Array<Record<string, unknown>>; truncated: boolean };
    expect(body).toEqual({
      assets: [
        {
          type: 'screenshot',
          name: 'home.png',
          url: `http://127.0.0.1:1/v1/check-results/${t.check.id}/${resultId}/assets/home.png`,
          contentType: 'image/png',
          source: { type: 'check-result', checkId: t.check.id, checkName: 'Login flow', checkType: 'API', resultId },
        },
      ],
      truncated: false,
    });

    const download = await fetch(`${h.url}/v1/check-results/${t.check.id}/${resultId}/assets/home.png`, {
      headers: t.headers,
    });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('image/png');
    expect(download.headers.get('content-security-policy')).toContain('sandbox');
    expect(sha(Buffer.from(await download.arrayBuffer()))).toBe(sha(png));
  });

  it('filters the manifest by type and by a case-insensitive name glob', async () => {
    const t = await h.tenant();
    const runId = await h.run(t);
    await put(t, runId, 'step-1.png', Buffer.from('one'));
    await put(t, runId, 'trace.zip', Buffer.from('two'), {
      'x-artifact-kind': 'trace',
      'content-type': 'application/zip',
    });
    await put(t, runId, 'dump.bin', Buffer.from('three'), { 'x-artifact-kind': 'other' });
    const resultId = await h.submitResult(t, runId);
    const list = async (query: string) => {
      const res = await fetch(`${h.url}/v1/check-results/${t.check.id}/${resultId}/assets${query}`, {
        headers: t.headers,
      });
      return ((await res.json()) as { assets: Array<{ name: string; type: string }> }).assets
        .map((a) => `${a.type}:${a.name}`)
        .sort();
    };
    expect(await list('')).toEqual(['file:dump.bin', 'screenshot:step-1.png', 'trace:trace.zip']);
    expect(await list('?type=trace&type=file')).toEqual(['file:dump.bin', 'trace:trace.zip']);
    expect(await list('?name=STEP-*.PNG')).toEqual(['screenshot:step-1.png']);
    expect(await list('?name=')).toHaveLength(3);
  });

  it('continues a partial upload with PATCH at the held offset and refuses a wrong offset with the real one', async () => {
    const t = await h.tenant();
    const runId = await h.run(t);
    const data = Buffer.from(Array.from({ length: 30_000 }, (_, i) => (i * 7) % 256));
    // A PUT whose body is shorter than upload-length: the service keeps the prefix.
    const first = await put(t, runId, 'video.webm', data.subarray(0, 10_000), {
      'upload-length': '30000',
      'x-artifact-sha256': sha(data),
      'x-artifact-kind': 'video',
    });
    expect(await first.json()).toMatchObject({ received: 10_000, complete: false });

    const patch = (offset: number, body: Buffer) =>
      fetch(`${h.url}/agent/v1/runs/${runId}/artifacts/video.webm`, {
        method: 'PATCH',
        headers: {
          authorization: `Bearer ${t.key}`,
          'content-type': 'application/offset+octet-stream',
          'upload-offset': String(offset),
        },
        body: new Uint8Array(body),
      });
    const wrong = await patch(5_000, data.subarray(5_000));
    expect(wrong.status).toBe(409);
    expect(wrong.headers.get('upload-offset')).toBe('10000');
    const done = await patch(10_000, data.subarray(10_000));
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({ received: 30_000, complete: true });
    const stored = await readFile(path.join(h.dataDir, 'artifacts', t.accountId, runId, 'video.webm'));
    expect(sha(stored)).toBe(sha(data));
  });

  it('carries the hash from a request that ended part-way to the PATCH after it; anything else hashes the held bytes again', async () => {
    const t = await h.tenant();
    const runId = await h.run(t);
    const artifacts = h.service.artifacts;
    const { blobs } = artifacts;
    const read = blobs.read.bind(blobs);
    let readsBack = 0;
    blobs.read = (...args) => {
      readsBack++;
      return read(...args);
    };
    const bytes = (seed: number) => Buffer.from(Array.from({ length: 30_000 }, (_, i) => (i * seed) % 256));
    const upload = (data: Buffer) => ({
      kind: 'video' as const,
      contentType: 'video/webm',
      size: data.length,
      sha256: sha(data),
    });
    async function* part(data: Buffer, from: number, to: number, fail = false) {
      yield data.subarray(from, to);
      if (fail) throw new Error('connection reset');
    }

    const first = bytes(13);
    await artifacts.start(t.location, runId, 'v.webm', upload(first), part(first, 0, 10_000));
    expect(await artifacts.append(t.location, runId, 'v.webm', 10_000, part(first, 10_000, 20_000))).toMatchObject({
      received: 20_000,
      complete: false,
    });
    expect(readsBack).toBe(0);
    // Started over with other bytes, cut at the same offset: the hash kept at 20,000 is the old
    // upload's, so the PATCH reads the held bytes back (with the old hash it would end in a 422).
    const second = bytes(7);
    await expect(
      artifacts.start(t.location, runId, 'v.webm', upload(second), part(second, 0, 20_000, true)),
    ).rejects.toThrow('connection reset');
    expect(await artifacts.append(t.location, runId, 'v.webm', 20_000, part(second, 20_000, 30_000))).toMatchObject({
      received: 30_000,
      complete: true,
      sha256: sha(second),
    });
    expect(readsBack).toBe(1);
  });

  it('refuses an upload over ARTIFACT_MAX_BYTES with 413 before reading it', async () => {
    const t = await h.tenant();
    const runId = await h.run(t);
    const res = await put(t, runId, 'big.webm', Buffer.alloc(10), { 'upload-length': String(1024 * 1024 + 1) });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { message: string }).message).toContain('ARTIFACT_MAX_BYTES');
    expect(await h.service.store.artifacts.get(t.accountId, runId, 'big.webm')).toBeUndefined();
  });

  it('discards bytes that do not match the declared SHA-256 (422)', async () => {
    const t = await h.tenant();
    const runId = await h.run(t);
    const res = await put(t, runId, 'shot.png', Buffer.from('actual bytes'), {
      'x-artifact-sha256': sha(Buffer.from('other bytes')),
    });
    expect(res.status).toBe(422);
    expect(await h.service.store.artifacts.get(t.accountId, runId, 'shot.png')).toBeUndefined();
    expect(existsSync(path.join(h.dataDir, 'artifacts', t.accountId, runId, 'shot.png'))).toBe(false);
  });

  it('discards a chunked body (as the agent sends) that does not match the declared SHA-256 (422)', async () => {
    const t = await h.tenant();
    const runId = await h.run(t);
    // This suite's ARTIFACT_MAX_BYTES (1 MiB) in 256 KiB chunks: one whole write batch of the store.
    const chunks = Array.from({ length: 4 }, (_, i) => String.fromCharCode(97 + i).repeat(256 * 1024));
    const headers = {
      authorization: `Bearer ${t.key}`,
      'content-type': 'application/octet-stream',
      'upload-length': String(4 * 256 * 1024),
      'x-artifact-kind': 'other',
      'x-artifact-sha256': sha(Buffer.from('other bytes')),
    };
    const res = await rawRequest('PUT', `/agent/v1/runs/${runId}/artifacts/blob.bin`, headers, chunks);
    expect(res.status, res.body).toBe(422);
    expect(await h.service.store.artifacts.get(t.accountId, runId, 'blob.bin')).toBeUndefined();
    expect(existsSync(path.join(h.dataDir, 'artifacts', t.accountId, runId, 'blob.bin'))).toBe(false);
  });

  it('names the header at fault for a missing kind or digest', async () => {
    const t = await h.tenant();
    const runId = await h.run(t);
    const noKind = await put(t, runId, 'a.png', Buffer.from('x'), { 'x-artifact-kind': 'gif' });
    expect(noKind.status).toBe(400);
    expect(((await noKind.json()) as { message: string }).message).toMatch(
      /x-artifact-kind must be one of screenshot, video/,
    );
    const noSha = await put(t, runId, 'a.png', Buffer.from('x'), { 'x-artifact-sha256': 'abc' });
    expect(((await noSha.json()) as { message: string }).message).toMatch(/x-artifact-sha256/);
  });

  it.each([
    ['..', '%2E%2E'],
    ['../../etc/passwd', '..%2F..%2Fetc%2Fpasswd'],
    ['a/b', 'a%2Fb'],
    ['a\\b', 'a%5Cb'],
    ['.hidden', '.hidden'],
    ['with space', 'with%20space'],
    ['nul\0', 'nul%00'],
  ])('rejects the artifact name %j with 400 and writes nothing', async (_name, encoded) => {
    const t = await h.tenant();
    const runId = await h.run(t);
    // A raw path: fetch (and a URL string) would normalise "%2E%2E" away before it left.
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const { hostname, port } = new URL(h.url);
      const req = http.request(
        {
          hostname,
          port,
          path: `/agent/v1/runs/${runId}/artifacts/${encoded}`,
          method: 'PUT',
          headers: {
            authorization: `Bearer ${t.key}`,
            'content-type': 'text/plain',
            'upload-length': '1',
            'x-artifact-kind': 'log',
            'x-artifact-sha256': sha(Buffer.from('x')),
          },
        },
        (r) => {
          let body = '';
          r.setEncoding('utf8')
            .on('data', (c: string) => (body += c))
            .on('end', () => resolve({ status: r.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end('x');
    });
    expect(res.status).toBe(400);
    expect((JSON.parse(res.body) as { message: string }).message).toMatch(/params\/name must be/);
    expect(readdirSync(h.dataDir).includes('artifacts') ? readdirSync(path.join(h.dataDir, 'artifacts')) : []).toEqual(
      [],
    );
  });

  it('rejects a run id that is not one (400) and another location\u2019s run (404)', async () => {
    const a = await h.tenant('A');
    const b = await h.tenant('B');
    const runOfA = await h.run(a);
    const bad = await put(a, '..%2F..', 'x.png', Buffer.from('x'));
    expect(bad.status).toBe(400);
    const foreign = await put(b, runOfA, 'x.png', Buffer.from('x'));
    expect(foreign.status).toBe(404);
    const unknown = await put(a, crypto.randomUUID(), 'x.png', Buffer.from('x'));
    expect(unknown.status).toBe(404);
  });

  it('frees each body chunk that owns its memory once stored, and leaves views into shared memory intact', async () => {
    const t = await h.tenant();
    const runId = await h.run(t);
    const owned = Array.from({ length: 3 }, (_, i) => Buffer.from(new Uint8Array(64 * 1024).fill(i + 1)));
    const pool = new Uint8Array(8 * 1024).fill(9);
    const view = pool.subarray(1024, 2048);
    const bytes = Buffer.concat([...owned, view]);
    async function* body() {
      yield* owned;
      yield view;
    }
    const upload = { kind: 'screenshot' as const, contentType: 'image/png', size: bytes.length, sha256: sha(bytes) };
    const status = await h.service.artifacts.start(t.location, runId, 'freed.png', upload, body());
    expect(status).toMatchObject({ complete: true, received: bytes.length });
    // Detached: the memory went back when the next chunk was asked for, not at a later collection.
    expect(owned.map((b) => b.buffer.byteLength)).toEqual([0, 0, 0]);
    expect(pool.byteLength).toBe(8 * 1024);
    const stored: Buffer[] = [];
    for await (const part of h.service.artifacts.blobs.read({ accountId: t.accountId, runId, name: 'freed.png' }))
      stored.push(part as Buffer);
    expect(Buffer.concat(stored).equals(bytes)).toBe(true);
  });

  it('serves artifacts to the owning account only: 404 for another account', async () => {
    const a = await h.tenant('A');
    const b = await h.tenant('B');
    const runId = await h.run(a);
    await put(a, runId, 'home.png', Buffer.from('secret screenshot'));
    const resultId = await h.submitResult(a, runId);
    const base = `${h.url}/v1/check-results/${a.check.id}/${resultId}/assets`;
    expect((await fetch(`${base}/home.png`, { headers: a.headers })).status).toBe(200);
    for (const url of [base, `${base}/home.png`]) {
      const res = await fetch(url, { headers: b.headers });
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain('secret');
    }
    expect((await fetch(`${base}/home.png`)).status).toBe(401);
    expect((await fetch(`${base}/missing.png`, { headers: a.headers })).status).toBe(404);
  });
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One request written byte for byte on a socket (node:net), so the body can be longer than the
 * headers declare; resolves with the answer once the service has sent it whole.
 */
function rawRequest(
  method: string,
  urlPath: string,
  headers: Record<string, string>,
  body: Buffer | string[],
): Promise<RawAnswer> {
  const { hostname, port } = new URL(h.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let received = Buffer.alloc(0);
    const tryParse = () => {
      const end = received.indexOf('\r\n\r\n');
      if (end === -1) return;
      const [statusLine, ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
      const head: Record<string, string> = {};
      for (const line of lines)
        head[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      const length = Number(head['content-length'] ?? 0);
      if (received.length < end + 4 + length) return;
      socket.destroy();
      resolve({
        status: Number(statusLine?.split(' ')[1]),
        headers: head,
        body: received.subarray(end + 4, end + 4 + length).toString(),
      });
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      tryParse();
    });
    socket.on('error', reject);
    socket.on('close', () =>
      reject(new Error(`the connection closed before a whole answer: ${JSON.stringify(received.toString())}`)),
    );
    const headLines = [
      `${method} ${urlPath} HTTP/1.1`,
      `host: ${hostname}:${port}`,
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ];
    if (Array.isArray(body)) {
      // Chunked: nothing in the head says how long the body is.
      socket.write(`${[...headLines, 'transfer-encoding: chunked'].join('\r\n')}\r\n\r\n`);
      for (const part of body) socket.write(`${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`);
      socket.write('0\r\n\r\n');
    } else {
      socket.write(`${[...headLines, `content-length: ${body.length}`].join('\r\n')}\r\n\r\n`);
      socket.write(body);
    }
  });
}

describe('a body longer than upload-length', () => {
  beforeEach(async () => {
    h = await startArtifactService({ ARTIFACT_MAX_BYTES: String(1024 * 1024) });
  });

  const declared = Buffer.from('the declared bytes of the artifact');
  const startHeaders = (t: ArtifactTenant) => ({
    authorization: `Bearer ${t.key}`,
    'content-type': 'text/plain',
    'upload-length': String(declared.length),
    'x-artifact-kind': 'log',
    'x-artifact-sha256': sha(declared),
  });
  /** Starts the upload of the run's run.log as `declared`, sending `body` (chunked when given in parts). */
  const startRunLog = (t: ArtifactTenant, runId: string, body: Buffer | string[]) =>
    rawRequest('PUT', `/agent/v1/runs/${runId}/artifacts/run.log`, startHeaders(t), body);
  const head = async (t: ArtifactTenant, runId: string) => {
    const res = await fetch(`${h.url}/agent/v1/runs/${runId}/artifacts/run.log`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${t.key}` },
    });
    return { offset: res.headers.get('upload-offset'), length: res.headers.get('upload-length') };
  };
  const stored = (t: ArtifactTenant, runId: string) =>
    readFile(path.join(h.dataDir, 'artifacts', t.accountId, runId, 'run.log'), 'utf8');

  it('PUT with content-length past upload-length: 413 naming upload-length; the declared bytes complete the artifact', async () => {
    const t = await h.tenant();
    const runId = await h.run(t);
    const res = await startRunLog(t, runId, Buffer.concat([declared, Buffer.from(' AND MORE')]));
    expect(res.status, res.body).toBe(413);
    expect((JSON.parse(res.body) as { message: string }).message).toMatch(
      new RegExp(`body runs past upload-length ${declared.length}.*artifact is complete`),
    );
    expect(res.headers['upload-offset']).toBe(String(declared.length));
    expect(await h.service.store.artifacts.get(t.accountId, runId, 'run.log')).toMatchObject({
      complete: true,
      size: declared.length,
    });
    expect(await head(t, runId)).toEqual({ offset: String(declared.length), length: String(declared.length) });
    expect(await stored(t, runId)).toBe(declared.toString());
  });

  it('a chunked PUT whose chunks run past upload-length: the same 413, the artifact complete', async () => {
    const t = await h.tenant();
    const runId = await h.run(t);
    const res = await startRunLog(t, runId, [
      declared.toString(),
      ...Array.from({ length: 16 }, () => 'x'.repeat(256 * 1024)),
    ]);
    expect(res.status, res.body).toBe(413);
    expect(await h.service.store.artifacts.get(t.accountId, runId, 'run.log')).toMatchObject({ complete: true });
    expect(await stored(t, runId)).toBe(declared.toString());
  });

  it('a PATCH that runs past upload-length completes the artifact with the bytes up to it', async () => {
    const t = await h.tenant();
    const runId = await h.run(t);
    const first = await startRunLog(t, runId, declared.subarray(0, 10));
    expect(JSON.parse(first.body)).toMatchObject({ received: 10, complete: false });
    const res = await rawRequest(
      'PATCH',
      `/agent/v1/runs/${runId}/artifacts/run.log`,
      { authorization: `Bearer ${t.key}`, 'content-type': 'application/offset+octet-stream', 'upload-offset': '10' },
      Buffer.concat([declared.subarray(10), Buffer.from('trailing junk')]),
    );
    expect(res.status, res.body).toBe(413);
    expect(await head(t, runId)).toEqual({ offset: String(declared.length), length: String(declared.length) });
    expect(await h.service.store.artifacts.get(t.accountId, runId, 'run.log')).toMatchObject({ complete: true });
  });

  it('excess bytes whose declared part does not match the SHA-256: 413 that says the upload was discarded', async () => {
    const t = await h.tenant();
    const runId = await h.run(t);
    const wrong = Buffer.from('other bytes, same length as declared').subarray(0, declared.length);
    const res = await startRunLog(t, runId, Buffer.concat([wrong, Buffer.from('!!')]));
    expect(res.status, res.body).toBe(413);
    expect((JSON.parse(res.body) as { message: string }).message).toMatch(
      /do not match the declared SHA-256.*start it again with PUT/,
    );
    expect(await h.service.store.artifacts.get(t.accountId, runId, 'run.log')).toBeUndefined();
  });
});

describe('retention', () => {
  it('deletes artifacts with their check, and uploads left incomplete past the TTL', async () => {
    h = await startArtifactService({ ARTIFACT_INCOMPLETE_TTL_SECONDS: '60' });
    const t = await h.tenant();
    const runId = await h.run(t);
    await put(t, runId, 'kept.png', Buffer.from('kept'));
    await h.submitResult(t, runId);
    const partialRun = await h.run(t);
    await put(t, partialRun, 'partial.webm', Buffer.from('part'), {
      'upload-length': '100',
      'x-artifact-kind': 'video',
    });

    expect(await h.service.artifacts.sweep()).toBe(0);
    const future = new Date(Date.now() + 120_000);
    const sweeper = new (
      h.service.artifacts.constructor as typeof import('../../src/service/artifacts/service.ts').ArtifactService
    )({
      store: h.service.store,
      blobs: h.service.artifacts.blobs,
      config: h.service.artifacts.config,
      log: { info() {}, warn() {}, error() {} },
      now: () => future.getTime(),
    });
    expect(await sweeper.sweep()).toBe(1);
    expect(existsSync(path.join(h.dataDir, 'artifacts', t.accountId, partialRun, 'partial.webm'))).toBe(false);
    expect(existsSync(path.join(h.dataDir, 'artifacts', t.accountId, runId, 'kept.png'))).toBe(true);

    await h.service.store.checks.delete(t.accountId, t.check.id);
    expect(await h.service.artifacts.sweep()).toBe(1);
    expect(existsSync(path.join(h.dataDir, 'artifacts', t.accountId, runId, 'kept.png'))).toBe(false);
    expect(await h.service.store.artifacts.get(t.accountId, runId, 'kept.png')).toBeUndefined();
  });
});

describe('local disk store', () => {
  it('refuses every key component that could leave its root', async () => {
    const root = path.join(work, 'root');
    const store = new LocalDiskArtifactStore(root);
    const ok = { accountId: 'acc-1', runId: 'run-1', name: 'a.png' };
    expect(store.pathOf(ok)).toBe(path.join(root, 'acc-1', 'run-1', 'a.png'));
    for (const bad of [
      { ...ok, name: '..' },
      { ...ok, name: '../x' },
      { ...ok, name: 'a/../../x' },
      { ...ok, runId: '..' },
      { ...ok, runId: '../../tmp' },
      { ...ok, accountId: '/etc' },
      { ...ok, accountId: '..' },
    ]) {
      expect(() => store.pathOf(bad)).toThrow(UnsafeArtifactKeyError);
      await expect(store.write(bad, 0, [Buffer.from('x')])).rejects.toThrow(UnsafeArtifactKeyError);
    }
    await writeFile(path.join(work, 'outside'), 'untouched');
    expect(await readFile(path.join(work, 'outside'), 'utf8')).toBe('untouched');
  });

  it('writes in batches yet keeps every byte that arrived when the source fails mid-batch, in order', async () => {
    const store = new LocalDiskArtifactStore(path.join(work, 'root'));
    const key = { accountId: 'acc', runId: 'run', name: 'v.webm' };
    // Odd sizes that straddle the 1 MiB batch boundaries, then a failure with a partial batch held.
    const parts = [700 * 1024 + 1, 700 * 1024 + 3, 700 * 1024 + 5, 12_345].map((n, i) => Buffer.alloc(n, i + 1));
    async function* broken() {
      for (const part of parts) yield part;
      throw new Error('connection reset');
    }
    await expect(store.write(key, 0, broken())).rejects.toThrow('connection reset');
    expect(await readFile(store.pathOf(key))).toEqual(Buffer.concat(parts));
  });

  it('lets the source reuse one buffer for every chunk: each is copied before the next is asked for', async () => {
    const store = new LocalDiskArtifactStore(path.join(work, 'root'));
    const key = { accountId: 'acc', runId: 'run', name: 'reused.bin' };
    const buffer = Buffer.alloc(64 * 1024);
    async function* reusing() {
      for (let i = 0; i < 40; i++) yield buffer.fill(i);
    }
    expect(await store.write(key, 0, reusing())).toBe(40 * 64 * 1024);
    const expected = Buffer.concat(Array.from({ length: 40 }, (_, i) => Buffer.alloc(64 * 1024, i)));
    expect((await readFile(store.pathOf(key))).equals(expected)).toBe(true);
  });

  it('keeps what arrived when the source fails, so the size is the resume point', async () => {
    const store = new LocalDiskArtifactStore(path.join(work, 'root'));
    const key = { accountId: 'acc', runId: 'run', name: 'v.webm' };
    async function* broken() {
      yield Buffer.alloc(1000, 1);
      yield Buffer.alloc(500, 2);
      throw new Error('connection reset');
    }
    await expect(store.write(key, 0, broken())).rejects.toThrow('connection reset');
    expect(await store.stat(key)).toEqual({ size: 1500 });
    expect(await store.write(key, 1500, [Buffer.alloc(100, 3)])).toBe(100);
    expect(await store.stat(key)).toEqual({ size: 1600 });
  });
});
