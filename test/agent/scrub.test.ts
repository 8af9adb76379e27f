import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { traceroute } from '../../src/agent/diagnostics/traceroute.ts';
import { createAgentLogger } from '../../src/agent/logger.ts';
import { sanitizeEvent } from '../../src/agent/observability.ts';
import {
  CYCLE,
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
import { activeScrubberCount, resetActiveScrubbers } from '../../src/agent/scrub/registry.ts';

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
    [
      'HTML with numeric quote',
      SECRET.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&#34;'),
    ],
    ['base64', Buffer.from(SECRET).toString('base64')],
    ['base64url', Buffer.from(SECRET).toString('base64url')],
    ['URL parser, query', new URL(`http://h.test/?${SECRET}`).search.slice(1)],
    ['URL parser, fragment', new URL(`http://h.test/#${SECRET}`).hash.slice(1)],
  ];
  it.each(cases)('scrubs the %s form inside text', (_, form) => {
    const out = scrubber.scrubText(`before ${form} after`);
    expect(out).toBe(`before ${REDACTED} after`);
  });

  it('scrubs a value the URL parser rewrote in a path (a quote, a space, a tab dropped), for any secret', () => {
    const secret = "it's a\tsecret";
    const url = new URL(`http://h.test/${secret}/x?q=${secret}`).href;
    expect(url).not.toContain(secret);
    expect(new Scrubber([secret]).scrubText(url)).toBe(`http://h.test/${REDACTED}/x?q=${REDACTED}`);
  });

  it.each([0, 1, 2, 3, 4, 5])(
    'scrubs a value base64-encoded inside a longer text at offset %i (e.g. a Basic credential)',
    (pad) => {
      const encoded = Buffer.from(`${'x'.repeat(pad)}user:${SECRET}:tail`).toString('base64');
      const out = scrubber.scrubText(`Authorization: Basic ${encoded}`);
      // What remains must not decode back to the value.
      expect(out).toContain(REDACTED);
      const survivors = out.replace('Authorization: Basic ', '').split(REDACTED);
      for (const part of survivors) expect(Buffer.from(part, 'base64').toString('latin1')).not.toContain('w/rd');
    },
  );

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
      redactHeaders({
        Authorization: 'Bearer x',
        'content-type': 'text/plain',
        'Set-Cookie': ['a=1', 'b=2'],
        'X-API-Key': 'k',
        'x-auth-token': 't',
        Cookie: 'c',
        'Proxy-Authorization': 'p',
      }),
    ).toEqual({
      Authorization: REDACTED,
      'content-type': 'text/plain',
      'Set-Cookie': [REDACTED, REDACTED],
      'X-API-Key': REDACTED,
      'x-auth-token': REDACTED,
      Cookie: REDACTED,
      'Proxy-Authorization': REDACTED,
    });
    expect(
      redactHeaders([
        { key: 'authorization', value: 'x' },
        { key: 'Accept', value: '*/*' },
      ]),
    ).toEqual([
      { key: 'authorization', value: REDACTED },
      { key: 'Accept', value: '*/*' },
    ]);
    expect(
      redactHeaders([
        ['COOKIE', 'x'],
        ['Accept', 'y'],
      ]),
    ).toEqual([
      ['COOKIE', REDACTED],
      ['Accept', 'y'],
    ]);
    expect(redactHeaders(['set-cookie', 'x', 'accept', 'y'])).toEqual(['set-cookie', REDACTED, 'accept', 'y']);
  });

  it('walks every string of a nested result, keys included, and redacts headers at any depth', () => {
    const s = new Scrubber(['top-secret-value']);
    const result = {
      error: 'failed with top-secret-value',
      apiCheckResult: {
        request: {
          url: `https://x.test/?k=${encodeURIComponent('top-secret-value')}`,
          headers: { authorization: 'Basic abc', accept: 'top-secret-value' },
        },
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
    expect(new Scrubber(['secret-abc']).scrubDeep(a)).toEqual({ v: REDACTED, self: CYCLE });
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
    expect(s.scrubText('not-a-secret variable-secret prefixed-secret runtime-secret')).toBe(
      `not-a-secret ${REDACTED} ${REDACTED} ${REDACTED}`,
    );
    expect(
      scrubText('artifact variable-secret', {
        environmentVariables: [{ key: 'PW', value: 'variable-secret', secret: true }],
      }),
    ).toBe(`artifact ${REDACTED}`);
  });
});

describe('Scrubber: shared references are not cycles', () => {
  const SHARED_SECRET = 'sw0rdfish-secret';
  const scrubber = new Scrubber([SHARED_SECRET]);

  type Child = { ref: number } | { leaf: string | number | boolean | null };
  type NodeSpec = { isArray: boolean; children: Child[] };
  const leaf = fc.oneof(
    fc.string({ maxLength: 6 }),
    fc.constant(`x${SHARED_SECRET}y`),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
  );
  // Up to 7 objects/arrays whose children are leaves or references to any node (itself, an
  // ancestor, a sibling, a descendant): shared subtrees, cross edges and real cycles.
  const graph = fc.integer({ min: 1, max: 7 }).chain((n) =>
    fc.array(
      fc.record({
        isArray: fc.boolean(),
        children: fc.array(fc.oneof(fc.record({ ref: fc.nat(n - 1) }), fc.record({ leaf })), { maxLength: 3 }),
      }),
      { minLength: n, maxLength: n },
    ),
  );

  /** The nodes' objects; with `acyclic`, a reference only points to a later node (a DAG). */
  function build(spec: NodeSpec[], acyclic: boolean): unknown {
    const nodes: Array<unknown[] | Record<string, unknown>> = spec.map((s) => (s.isArray ? [] : {}));
    spec.forEach((s, i) => {
      s.children.forEach((c, j) => {
        let v: unknown = 'leaf' in c ? c.leaf : nodes[c.ref];
        if ('ref' in c && acyclic) v = i === spec.length - 1 ? null : nodes[i + 1 + (c.ref % (spec.length - i - 1))];
        const node = nodes[i]!;
        if (Array.isArray(node)) node.push(v);
        else node[`k${j}`] = v;
      });
    });
    return nodes[0];
  }

  /** The definition: every place is the original, scrubbed; only a reference to an ancestor is cut. */
  function expectScrubbedCopy(orig: unknown, out: unknown, ancestors: readonly object[]): void {
    if (typeof orig === 'string') return void expect(out).toBe(orig.replaceAll(SHARED_SECRET, REDACTED));
    if (orig === null || typeof orig !== 'object') return void expect(out).toBe(orig);
    if (ancestors.includes(orig)) return void expect(out).toBe(CYCLE);
    expect(Array.isArray(out)).toBe(Array.isArray(orig));
    expect(Object.keys(out as object)).toEqual(Object.keys(orig));
    for (const [k, v] of Object.entries(orig))
      expectScrubbedCopy(v, (out as Record<string, unknown>)[k], [...ancestors, orig]);
  }

  it('property: without cycles the copy equals the original, scrubbed, at every place a shared subtree occurs', () => {
    fc.assert(
      fc.property(graph, (spec) => {
        const root = build(spec, true);
        const expected = JSON.parse(JSON.stringify(root).replaceAll(SHARED_SECRET, REDACTED)) as unknown;
        expect(scrubber.scrubDeep(root)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('property: with shared references and cycles, only the back edge of a real cycle is cut', () => {
    fc.assert(
      fc.property(graph, (spec) => {
        const root = build(spec, false);
        const out = scrubber.scrubDeep(root);
        expectScrubbedCopy(root, out, []);
        expect(() => JSON.stringify(out)).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });

  it('the same object in two places is copied into both', () => {
    const tls = { protocol: 'TLSv1.3', certificate: { subject: 'CN=localhost' } };
    const out = scrubber.scrubDeep({ response: { tls }, details: { tls } });
    expect(out).toEqual({ response: { tls }, details: { tls } });
  });

  it('a long chain of doubly shared objects is walked in linear time, not once per path', () => {
    let node: Record<string, unknown> = { v: SHARED_SECRET };
    for (let i = 0; i < 64; i++) node = { a: node, b: node };
    const t0 = performance.now();
    const out = scrubber.scrubDeep(node) as Record<string, unknown>;
    expect(performance.now() - t0).toBeLessThan(1000);
    let leafOut: Record<string, unknown> = out;
    for (let i = 0; i < 64; i++) leafOut = leafOut.b as Record<string, unknown>;
    expect(leafOut).toEqual({ v: REDACTED });
  });

  it("a traceroute result (the last hop's latency is also finalHopLatency) keeps both", async () => {
    // A stand-in for traceroute that prints what traceroute -n prints for a one-hop path, so the
    // result is built by the agent's own traceroute().
    const dir = mkdtempSync(join(tmpdir(), 'outpost-scrub-trace-'));
    const bin = join(dir, 'traceroute');
    writeFileSync(
      bin,
      "#!/bin/sh\necho 'traceroute to 127.0.0.1 (127.0.0.1), 20 hops max'\necho ' 1  127.0.0.1  0.050 ms  0.030 ms'\n",
      { mode: 0o755 },
    );
    try {
      const trace = await traceroute('localhost', '127.0.0.1', 4, { timeLimitMs: 5000, binary: bin });
      expect(trace.destinationReached).toBe(true);
      const out = scrubber.scrubDeep({ details: { traceroute: trace } }).details.traceroute;
      expect(out.finalHopLatency).toEqual({ min: 0.03, avg: 0.04, max: 0.05 });
      expect(out.hops.at(-1)?.latency).toEqual({ min: 0.03, avg: 0.04, max: 0.05 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
    log.info(
      { detail: { url: `https://x.test/?q=${encodeURIComponent('log-secret-42')}` } },
      'message with log-secret-42',
    );
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

  it('forgets a released job without secrets at once: only secrets need the grace period', () => {
    const releases = Array.from({ length: 1000 }, () => registerActiveScrubber(new Scrubber(), 60_000));
    const withSecret = registerActiveScrubber(new Scrubber(['kept-secret-1']), 60_000);
    expect(activeScrubberCount()).toBe(1001);
    for (const release of releases) release();
    withSecret();
    expect(activeScrubberCount()).toBe(1);
    expect(scrubActive('x kept-secret-1')).toBe(`x ${REDACTED}`);
  });

  it('scrubs error reports (sanitizeEvent) with the active secrets', () => {
    registerActiveScrubber(new Scrubber(['report-secret-9']));
    const event = sanitizeEvent({
      type: undefined,
      message: 'oops report-secret-9',
      exception: {
        values: [
          {
            type: 'Error',
            value: `bad ${Buffer.from('report-secret-9').toString('base64')}`,
            stacktrace: { frames: [{ function: 'report-secret-9', filename: 'f.js' }] },
          },
        ],
      },
    });
    expect(JSON.stringify(event)).not.toMatch(/report-secret-9|cmVwb3J0LXNlY3JldC05/);
  });

  it('costs nothing when no job has secrets', () => {
    const text = 'x'.repeat(1000);
    expect(scrubActive(text)).toBe(text);
  });
});
