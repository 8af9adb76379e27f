/**
 * A response whose body cannot be decoded as its Content-Encoding says keeps its status and headers;
 * the result says why there is no body, and only an assertion that needs the body fails.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCheckRunner } from '../../src/agent/checks/api.ts';
import type { Assertion } from '../../src/shared/checks/types.ts';
import { apiCheck, context } from './api-fixtures.ts';
import { type JsonServer, startServer } from './helpers.ts';

let server: JsonServer;
let origin: string;

beforeAll(async () => {
  // /lie/<encoding>: says the body is so encoded, sends it plain. /cut: a gzip body that ends early.
  server = await startServer((req, _body, res) => {
    const [, route, encoding] = (req.url ?? '').split('/');
    res.setHeader('content-type', 'text/plain');
    res.setHeader('x-trace', 'abc');
    if (route === 'lie') {
      res.setHeader('content-encoding', encoding ?? 'gzip');
      res.end('hello, this body is not compressed');
      return;
    }
    res.setHeader('content-encoding', 'gzip');
    res.end(gzipSync('hello, this body is compressed').subarray(0, 15));
  });
  origin = server.url;
});
afterAll(() => server?.close());

const status200: Assertion = { source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200' };
const gzipError =
  'the response body could not be decoded as gzip (Content-Encoding: gzip): incorrect header check (Z_DATA_ERROR)';

describe('a body that cannot be decoded', () => {
  it('keeps status and headers, says why, and a STATUS_CODE assertion passes', async () => {
    const r = await apiCheckRunner.run(apiCheck({ url: `${origin}/lie/gzip`, assertions: [status200] }), context());
    expect(r.hasFailures).toBe(false);
    expect(r.error).toBeNull();
    const res = r.apiCheckResult?.response;
    expect(res?.status).toBe(200);
    expect(res?.headers?.['x-trace']).toBe('abc');
    expect(res?.headers?.['content-encoding']).toBe('gzip');
    expect(res?.body).toBe('');
    expect(res?.bodyError).toBe(gzipError);
    expect(r.apiCheckResult?.requestError).toBeNull();
  });

  it('fails a TEXT_BODY assertion with that reason', async () => {
    const assertions: Assertion[] = [
      status200,
      { source: 'TEXT_BODY', comparison: 'CONTAINS', property: '', target: 'hello' },
    ];
    const r = await apiCheckRunner.run(apiCheck({ url: `${origin}/lie/gzip`, assertions }), context());
    expect(r.hasFailures).toBe(true);
    expect(r.error).toBe(`Assertion failed: TEXT_BODY CONTAINS "hello": ${gzipError}`);
    expect(r.apiCheckResult?.assertions.map((a) => a.passed)).toEqual([true, false]);
    expect(r.apiCheckResult?.response?.status).toBe(200);
  });

  it('fails a JSON_BODY assertion too, and names deflate and br as such', async () => {
    const json: Assertion = { source: 'JSON_BODY', comparison: 'NOT_NULL', property: '$.a', target: '' };
    const deflate = await apiCheckRunner.run(apiCheck({ url: `${origin}/lie/deflate`, assertions: [json] }), context());
    expect(deflate.error).toMatch(
      /^Assertion failed: JSON_BODY \$\.a NOT_NULL: the response body could not be decoded as deflate \(Content-Encoding: deflate\): /,
    );
    const br = await apiCheckRunner.run(apiCheck({ url: `${origin}/lie/br` }), context());
    expect(br.hasFailures).toBe(false);
    expect(br.apiCheckResult?.response?.bodyError).toMatch(
      /^the response body could not be decoded as br \(Content-Encoding: br\): /,
    );
  });

  it('a gzip body cut short is undecodable too, not a lost response', async () => {
    const r = await apiCheckRunner.run(apiCheck({ url: `${origin}/cut`, assertions: [status200] }), context());
    expect(r.hasFailures).toBe(false);
    expect(r.apiCheckResult?.response?.bodyError).toBe(
      'the response body could not be decoded as gzip (Content-Encoding: gzip): unexpected end of file (Z_BUF_ERROR)',
    );
  });
});
