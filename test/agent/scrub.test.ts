import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentLogger } from '../../src/agent/logger.ts';
import { sanitizeEvent } from '../../src/agent/observability.ts';
import {
  formsOf,
  MIN_SECRET_LENGTH,
  REDACTED,
  redactHeaders,
  registerActiveScrubber,
  Scrubber,
  scrubActive,
  scrubberForCheck,
  scrubText,
} from '../../src/agent/scrub/index.ts';
import { resetActiveScrubbers } from '../../src/agent/scrub/registry.ts';

afterEach(() => resetActiveScrubbers());

const SECRET = 'p@ss w/rd"<é>&+=';

describe('Scrubber: forms', () => {
  const scrubber = new Scrubber([SECRET]);
  const cases: Array<[string, string]> = [
    ['as given', SECRET],
    ['URL component', encodeURIComponent(SECRET)],
    ['URL component, lower-case hex', encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())],
    ['encodeURI', encodeURI(SECRET)],
    ['form (URLSearchParams)', new URLSearchParams({ v: SECRET }).toString().slice(2)],
    ['form (+ for space)', encodeURIComponent(SECRET).replace(/%20/g, '+')],
    ['JSON-escaped', JSON.stringify(SECRET).slice(1, -1)],
    ['JSON with \\u escapes', JSON.stringify(SECRET).slice(1, -1).replace('é', '\\u00e9')],
    ['JSON with escaped slash', JSON.stringify(SECRET).slice(1, -1).replace('/', '\\/')],
    ['HTML-escaped', SECRET.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')],
    ['HTML with numeric quote', SECRET.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&#34;')],
    ['base64', Buffer.from(SECRET).toString('base64')],
    ['base64url', Buffer.from(SECRET).toString('base64url')],
  ];
  it.each(cases)('scrubs the %s form inside text', (_, form) => {
    const out = scrubber.scrubText(`before ${form} after`);
    expect(out).toBe(`before ${REDACTED} after`);
  });

  it.each([0, 1, 2, 3, 4, 5])('scrubs a value base64-encoded inside a longer text at offset %i (e.g. a Basic credential)', (pad) => {
    const encoded = Buffer.from(`${'x'.repeat(pad)}user:${SECRET}:tail`).toString('base64');
    const out = scrubber.scrubText(`Authorization: Basic ${encoded}`);
    // What remains must not decode back to the value.
    expect(out).toContain(REDACTED);
    const survivors = out.replace('Authorization: Basic ', '').split(REDACTED);
    for (const part of survivors) expect(Buffer.from(part, 'base64').toString('latin1')).not.toContain('w/rd');
  });

  it('scrubs JSON that a serializer wrote, and keeps the JSON valid', () => {
    const json = JSON.stringify({ token: SECRET, nested: { list: [`x${SECRET}y`] } });
    const out = scrubber.scrubText(json);
    expect(JSON.parse(out)).toEqual({ token: REDACTED, nested: { list: [`x${REDACTED}y`] } });
  });

  it('prefers the longest form where several start at the same place', () => {
    const s = new Scrubber(['abc\\def']);
    // JSON-escaped form "abc\\\\def" must be taken whole, not as "abc\\" + leftover.
    expect(s.scrubText(JSON.stringify({ v: 'abc\\def' }))).toBe(`{"v":"${REDACTED}"}`);
  });

  it(`does not scrub values shorter than ${MIN_SECRET_LENGTH} characters`, () => {
    const s = new Scrubber(['1234', 'true', '']);
    expect(s.size).toBe(0);
    expect(s.add('abcd')).toBe(false);
    expect(s.add('abcde')).toBe(true);
    expect(s.scrubText('1234 true abcd abcde')).toBe(`1234 true abcd ${REDACTED}`);
  });

  it('escapes regular-expression characters in values', () => {
    const s = new Scrubber(['a.b*c(d)[e]{f}|g^h$i?j+k\\l']);
    expect(s.scrubText('xx a.b*c(d)[e]{f}|g^h$i?j+k\\l yy aXb')).toBe(`xx ${REDACTED} yy aXb`);
  });

  it('lists forms longest first and without duplicates', () => {
    const forms = formsOf('hello-world');
    expect(new Set(forms).size).toBe(forms.length);
    expect([...forms].sort((a, b) => b.length - a.length)).toEqual(forms);
  });
});

describe('Scrubber: headers and nested results', () => {
  it('redacts sensitive header values whatever they are, in every header shape', () => {
    expect(
      redactHeaders({ Authorization: 'Bearer x', 'content-type': 'text/plain', 'Set-Cookie': ['a=1', 'b=2'], 'X-API-Key': 'k', 'x-auth-token': 't', Cookie: 'c', 'Proxy-Authorization': 'p' }),
    ).toEqual({ Authorization: REDACTED, 'content-type': 'text/plain', 'Set-Cookie': [REDACTED, REDACTED], 'X-API-Key': REDACTED, 'x-auth-token': REDACTED, Cookie: REDACTED, 'Proxy-Authorization': REDACTED });
    expect(redactHeaders([{ key: 'authorization', value: 'x' }, { key: 'Accept', value: '*/*' }])).toEqual([
      { key: 'authorization', value: REDACTED },
      { key: 'Accept', value: '*/*' },
    ]);
    expect(redactHeaders([['COOKIE', 'x'], ['Accept', 'y']])).toEqual([['COOKIE', REDACTED], ['Accept', 'y']]);
    expect(redactHeaders(['set-cookie', 'x', 'accept', 'y'])).toEqual(['set-cookie', REDACTED, 'accept', 'y']);
  });

  it('walks every string of a nested result, keys included, and redacts headers at any depth', () => {
    const s = new Scrubber(['top-secret-value']);
    const result = {
      error: 'failed with top-secret-value',
      apiCheckResult: {
        request: { url: `https://x.test/?k=${encodeURIComponent('top-secret-value')}`, headers: { authorization: 'Basic abc', accept: 'top-secret-value' } },
        response: { body: '{"t":"top-secret-value"}', headers: { 'set-cookie': 'sid=1' }, status: 200 },
        jobLog: { lines: [{ msg: ['deep', ['deeper top-secret-value']] }] },
      },
      details: { 'top-secret-value': 1, n: 5, ok: true, nil: null },
    };
    const out = s.scrubDeep(result);
    expect(JSON.stringify(out)).not.toContain('top-secret-value');
    expect(out.apiCheckResult.request.headers).toEqual({ authorization: REDACTED, accept: REDACTED });
    expect(out.apiCheckResult.response.headers).toEqual({ 'set-cookie': REDACTED });
    expect(out.apiCheckResult.response.status).toBe(200);
    expect(out.details).toEqual({ [REDACTED]: 1, n: 5, ok: true, nil: null });
    // The input is not changed.
    expect(result.error).toBe('failed with top-secret-value');
  });

  it('cuts cycles instead of looping', () => {
    const a: Record<string, unknown> = { v: 'secret-abc' };
    a.self = a;
    expect(new Scrubber(['secret-abc']).scrubDeep(a)).toEqual({ v: REDACTED, self: '[cycle]' });
  });

  it('takes secret variables and OUTPOST_SECRET_* variables of a check, and values added at run time', () => {
    const s = scrubberForCheck({
      environmentVariables: [
        { key: 'PLAIN', value: 'not-a-secret', secret: false },
        { key: 'PW', value: 'variable-secret', secret: true },
        { key: 'OUTPOST_SECRET_TOKEN', value: 'prefixed-secret', secret: false },
      ],
    });
    s.add('runtime-secret');
    expect(s.scrubText('not-a-secret variable-secret prefixed-secret runtime-secret')).toBe(`not-a-secret ${REDACTED} ${REDACTED} ${REDACTED}`);
    expect(scrubText('artifact variable-secret', { environmentVariables: [{ key: 'PW', value: 'variable-secret', secret: true }] })).toBe(`artifact ${REDACTED}`);
  });
});

describe('active secrets: agent logs and error reports', () => {
  function capture() {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    return { lines, log: createAgentLogger({ level: 'DEBUG', destination }) };
  }

  it('scrubs log lines while a job with the secret runs, and stops after its release', () => {
    const { lines, log } = capture();
    const scrubber = new Scrubber(['log-secret-42']);
    const release = registerActiveScrubber(scrubber, 0);
    log.info({ detail: { url: `https://x.test/?q=${encodeURIComponent('log-secret-42')}` } }, 'message with log-secret-42');
    log.error({ err: new Error('thrown log-secret-42') }, 'failed');
    // A value added at run time applies at once.
    scrubber.add('added-later-77');
    log.warn('added-later-77 "quoted"');
    release();
    log.info('after release: log-secret-42');
    const text = lines.join('');
    expect(text.split('\n').slice(0, 3).join('\n')).not.toMatch(/log-secret-42|log-secret-42|added-later-77/);
    expect(text).toContain(REDACTED);
    expect(lines.at(-1)).toContain('after release: log-secret-42');
    for (const line of lines) JSON.parse(line);
  });

  it('keeps a released job’s secrets for a grace period (reports are sent asynchronously)', () => {
    const release = registerActiveScrubber(new Scrubber(['grace-secret']), 60_000);
    release();
    expect(scrubActive('x grace-secret')).toBe(`x ${REDACTED}`);
  });

  it('scrubs error reports (sanitizeEvent) with the active secrets', () => {
    registerActiveScrubber(new Scrubber(['report-secret-9']));
    const event = sanitizeEvent({
      type: undefined,
      message: 'oops report-secret-9',
      exception: { values: [{ type: 'Error', value: `bad ${Buffer.from('report-secret-9').toString('base64')}`, stacktrace: { frames: [{ function: 'report-secret-9', filename: 'f.js' }] } }] },
    });
    expect(JSON.stringify(event)).not.toMatch(/report-secret-9|cmVwb3J0LXNlY3JldC05/);
  });

  it('costs nothing when no job has secrets', () => {
    const text = 'x'.repeat(1000);
    expect(scrubActive(text)).toBe(text);
  });
});
