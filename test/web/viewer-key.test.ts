import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { keptKey, keyCookie, keyInQuery } from '../../src/service/web/viewer-key.ts';

const request = (over: Partial<{ protocol: string; query: unknown; cookie: string }>) =>
  ({
    protocol: over.protocol ?? 'http',
    query: over.query ?? {},
    headers: over.cookie ? { cookie: over.cookie } : {},
  }) as unknown as FastifyRequest;

describe('viewer keys of private status pages and dashboards', () => {
  it('keeps a key in an HttpOnly, SameSite=Lax cookie of the page path, Secure when the request or PUBLIC_URL is https', () => {
    const cookie = { name: 'k', key: 'sp_abc', path: '/status/acme' };
    expect(keyCookie(request({}), new URL('http://status.test/'), cookie)).toBe(
      'k=sp_abc; Path=/status/acme; HttpOnly; SameSite=Lax',
    );
    expect(keyCookie(request({}), new URL('https://status.test/'), cookie)).toContain('; Secure');
    expect(keyCookie(request({ protocol: 'https' }), new URL('http://status.test/'), cookie)).toContain('; Secure');
    expect(keyCookie(request({}), new URL('http://status.test/'), { ...cookie, maxAge: 60 })).toContain('Max-Age=60');
  });

  it('reads a key from the query (an empty one is none) and from its cookie', () => {
    expect(keyInQuery(request({ query: { key: 'x' } }))).toBe('x');
    expect(keyInQuery(request({ query: { key: '' } }))).toBeUndefined();
    expect(keyInQuery(request({ query: { key: ['x', 'y'] } }))).toBeUndefined();
    expect(keptKey(request({ cookie: 'a=1; k=sp_abc' }), 'k')).toBe('sp_abc');
    expect(keptKey(request({}), 'k')).toBeUndefined();
  });
});
