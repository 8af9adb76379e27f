/**
 * API checks ask for compressed bodies (Accept-Encoding: gzip, deflate, br, unless the check sets its
 * own), decode them before assertions and size accounting, and fail a run whose decoded body is
 * larger than the check's maxResponseBytes, naming the limit: against a real node:http server that
 * encodes as the request's Accept-Encoding asks.
 */
import type http from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCheckRunner } from '../../src/agent/checks/api.ts';
import { RESPONSE_BODY_CAP_BYTES } from '../../src/agent/checks/api/body.ts';
import type { Assertion } from '../../src/shared/checks/types.ts';
import { apiCheck, context } from './api-fixtures.ts';
import { type JsonServer, startServer } from './helpers.ts';

const DOC = JSON.stringify({ service: 'orders', ok: true, items: Array.from({ length: 50 }, (_, i) => ({ id: i })) });
const ENCODERS: Record<string, (b: Buffer) => Buffer> = {
  br: brotliCompressSync,
  gzip: gzipSync,
  deflate: deflateSync,
};

let server: JsonServer;
let origin: string;
const seenEncodings: Array<string | undefined> = [];

/** The body in the first encoding the request accepts (br, gzip, deflate, in that order), else plain. */
function send(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer, type: string): void {
  const accepted = String(req.headers['accept-encoding'] ?? '');
  const encoding = Object.keys(ENCODERS).find((e) => accepted.split(/\s*,\s*/).includes(e));
  res.setHeader('content-type', type);
  if (encoding) res.setHeader('content-encoding', encoding);
  res.end(encoding ? ENCODERS[encoding]!(body) : body);
}

beforeAll(async () => {
  // /json: DOC; /big/:n: n bytes of "a"; both encoded as asked.
  server = await startServer((req, _body, res) => {
    seenEncodings.push(req.headers['accept-encoding']);
    const [, route, n] = (req.url ?? '').split('/');
    if (route === 'json') send(req, res, Buffer.from(DOC), 'application/json');
    else send(req, res, Buffer.alloc(Number(n), 'a'), 'text/plain');
  });
  origin = server.url;
});
afterAll(() => server?.close());

const jsonOk: Assertion = { source: 'JSON_BODY', comparison: 'EQUALS', property: '$.service', target: 'orders' };
const header = (value: string) => [{ key: 'Accept-Encoding', value }];

describe('Accept-Encoding and decoding', () => {
  it('asks for gzip, deflate and br by default, and records the header in the request', async () => {
    const r = await apiCheckRunner.run(apiCheck({ url: `${origin}/json`, assertions: [jsonOk] }), context());
    expect(seenEncodings.at(-1)).toBe('gzip, deflate, br');
    expect(r.apiCheckResult?.request.headers['accept-encoding']).toBe('gzip, deflate, br');
    // The server picked br; the JSON assertion saw the decoded document.
    expect(r.apiCheckResult?.response?.headers?.['content-encoding']).toBe('br');
    expect(r.error).toBeNull();
    expect(r.apiCheckResult?.assertions[0]?.passed).toBe(true);
    expect(r.apiCheckResult?.response?.body).toBe(DOC);
  });

  it.each(['gzip', 'deflate', 'br'])('decodes a %s body before a JSON assertion', async (encoding) => {
    const r = await apiCheckRunner.run(
      apiCheck({ url: `${origin}/json`, headers: header(encoding), assertions: [jsonOk] }),
      context(),
    );
    expect(seenEncodings.at(-1)).toBe(encoding);
    expect(r.apiCheckResult?.response?.headers?.['content-encoding']).toBe(encoding);
    expect(r.hasFailures).toBe(false);
    expect(r.apiCheckResult?.assertions[0]).toMatchObject({ actual: 'orders', passed: true });
    expect(r.details?.bodyBytes).toBe(Buffer.byteLength(DOC));
  });

  it("the check's own Accept-Encoding wins (any case), and is sent once", async () => {
    const r = await apiCheckRunner.run(
      apiCheck({
        url: `${origin}/json`,
        headers: [{ key: 'accept-encoding', value: 'identity' }],
        assertions: [jsonOk],
      }),
      context(),
    );
    expect(seenEncodings.at(-1)).toBe('identity');
    expect(r.apiCheckResult?.response?.headers?.['content-encoding']).toBeUndefined();
    expect(r.apiCheckResult?.request.headers).toMatchObject({ 'accept-encoding': 'identity' });
    expect(r.hasFailures).toBe(false);
  });
});

describe('maxResponseBytes', () => {
  it('fails a run whose body is larger, naming the limit, and keeps the response', async () => {
    const r = await apiCheckRunner.run(
      apiCheck({ url: `${origin}/big/5000`, headers: header('identity'), maxResponseBytes: 1024 }),
      context(),
    );
    expect(r.hasFailures).toBe(true);
    expect(r.hasErrors).toBe(false);
    const message =
      'Response body larger than maxResponseBytes (1024 bytes, counted after decoding): the agent stopped reading it';
    expect(r.error).toBe(message);
    expect(r.apiCheckResult?.requestError).toBe(message);
    expect(r.apiCheckResult?.response?.status).toBe(200);
    expect(r.details).toMatchObject({ bodyComplete: false, maxResponseBytes: 1024 });
    expect(r.details?.bodyBytes).toBeGreaterThan(1024);
  });

  it('a body of exactly the limit passes', async () => {
    const r = await apiCheckRunner.run(apiCheck({ url: `${origin}/big/1024`, maxResponseBytes: 1024 }), context());
    expect(r.error).toBeNull();
    expect(r.hasFailures).toBe(false);
    expect(r.apiCheckResult?.response?.body).toHaveLength(1024);
    expect(r.apiCheckResult?.response?.bodyTruncated).toBe(false);
    expect(r.details).toMatchObject({ bodyBytes: 1024, bodyComplete: true });
  });

  it('counts decoded bytes: a small gzip body that inflates past the limit fails', async () => {
    const compressed = gzipSync(Buffer.alloc(200_000, 'a')).length;
    expect(compressed).toBeLessThan(10_000);
    const r = await apiCheckRunner.run(
      apiCheck({ url: `${origin}/big/200000`, headers: header('gzip'), maxResponseBytes: 100_000 }),
      context(),
    );
    expect(r.apiCheckResult?.response?.headers?.['content-encoding']).toBe('gzip');
    expect(r.hasFailures).toBe(true);
    expect(r.error).toMatch(/maxResponseBytes \(100000 bytes, counted after decoding\)/);
  });

  it('fails even when an assertion on the kept part passes', async () => {
    const starts: Assertion = { source: 'TEXT_BODY', comparison: 'CONTAINS', property: '', target: 'aaa' };
    const r = await apiCheckRunner.run(
      apiCheck({ url: `${origin}/big/3000`, maxResponseBytes: 2000, assertions: [starts] }),
      context(),
    );
    expect(r.apiCheckResult?.assertions[0]?.passed).toBe(true);
    expect(r.hasFailures).toBe(true);
    expect(r.error).toMatch(/^Response body larger than maxResponseBytes \(2000 bytes/);
  });

  it('without a limit, a body past 256 KiB passes, is cut for the result and says so', async () => {
    const size = RESPONSE_BODY_CAP_BYTES + 50_000;
    const r = await apiCheckRunner.run(apiCheck({ url: `${origin}/big/${size}` }), context());
    expect(r.hasFailures).toBe(false);
    expect(r.apiCheckResult?.response?.bodyTruncated).toBe(true);
    expect(r.apiCheckResult?.response?.body).toHaveLength(RESPONSE_BODY_CAP_BYTES);
    expect(r.details).toMatchObject({ bodyBytes: size, bodyComplete: true, maxResponseBytes: null });
  });
});
