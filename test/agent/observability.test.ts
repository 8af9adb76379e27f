import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { Observability, sanitizeEvent, scrub } from '../../src/agent/observability.ts';
import { VERSION } from '../../src/shared/version.ts';
import { type JsonServer, recordingLogger, startServer } from './helpers.ts';

const KEY = 'pl_SuperSecretLocationKey_42';

let envelopes: JsonServer | undefined;
let obs: Observability | undefined;
afterEach(async () => {
  await obs?.close();
  obs = undefined;
  await envelopes?.close();
  envelopes = undefined;
});

function leakyError(): Error {
  return new Error(
    `request to http://internal.corp:8080/private?token=abc failed; headers: authorization: Bearer ${KEY}, x-api-key: hunter2; also tried https://10.0.0.5/x with ${KEY}`,
  );
}

async function envelopeServer(): Promise<JsonServer> {
  envelopes = await startServer((_req, _body, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
  return envelopes;
}

describe('scrub', () => {
  it('replaces URLs, pl_ tokens and credentials', () => {
    const out = scrub(leakyError().message);
    expect(out).not.toMatch(/pl_|http:\/\/|https:\/\/|hunter2|Bearer|internal\.corp|10\.0\.0\.5/);
    expect(out).toContain('[redacted]');
    expect(scrub('ECONNREFUSED at connect')).toBe('ECONNREFUSED at connect');
  });
});

describe('sanitizeEvent', () => {
  it('keeps only the allowed fields', () => {
    const event = sanitizeEvent({
      type: undefined,
      event_id: 'e1',
      level: 'error',
      release: '1.0.0',
      platform: 'node',
      message: `failed at http://x.example/ with ${KEY}`,
      request: { url: 'http://x', headers: { authorization: KEY } },
      breadcrumbs: [{ message: 'http://x' }],
      extra: { env: { API_KEY: KEY } },
      user: { id: 'u' },
      tags: { t: 'v' },
      server_name: 'my-host',
      contexts: { app: { app_name: 'x' }, device: { arch: 'x' }, culture: { locale: 'x' } },
      exception: {
        values: [
          {
            type: 'Error',
            value: `boom ${KEY}`,
            mechanism: { type: 'generic', handled: true },
            stacktrace: {
              frames: [
                { filename: 'file.js', function: 'f', lineno: 1, colno: 2, context_line: KEY, vars: { key: KEY } },
              ],
            },
          },
        ],
      },
    });
    expect(Object.keys(event).sort()).toEqual([
      'contexts',
      'event_id',
      'exception',
      'level',
      'message',
      'platform',
      'release',
    ]);
    expect(Object.keys(event.contexts ?? {}).sort()).toEqual(['os', 'runtime']);
    expect(event.exception?.values?.[0]).toEqual({
      type: 'Error',
      value: 'boom [redacted]',
      stacktrace: { frames: [{ filename: 'file.js', function: 'f', lineno: 1, colno: 2 }] },
    });
    expect(JSON.stringify(event)).not.toContain(KEY);
  });
});

describe('Observability', () => {
  it('reports logger.error events through a custom undici transport, with nothing secret in them', async () => {
    const server = await envelopeServer();
    obs = new Observability({ enabled: true, dispatcher: new Agent(), version: VERSION });
    const { log } = recordingLogger(obs);
    obs.init(`http://publicreporttoken@127.0.0.1:${server.port}/1`);
    expect(obs.active).toBe(true);

    log.error(
      { err: leakyError(), headers: { authorization: `Bearer ${KEY}` } },
      `lease failed at https://svc.example/agent/v1/lease with ${KEY}`,
    );
    expect(await obs.flush(5_000)).toBe(true);

    expect(server.requests).toHaveLength(1);
    const request = server.requests[0];
    expect(request?.path).toMatch(/^\/api\/1\/envelope\//);
    // undici sent it (the default node transport would set no such header pair exactly like this).
    expect(request?.headers['content-type']).toBe('application/x-sentry-envelope');
    const body = request?.body ?? '';
    expect(body).not.toContain('pl_');
    expect(body).not.toContain(KEY);
    expect(body).not.toContain('http://');
    expect(body).not.toContain('https://');
    expect(body).not.toContain('hunter2');
    expect(body).not.toMatch(/bearer/i);
    expect(body).not.toContain('internal.corp');

    const lines = body.split('\n').filter(Boolean);
    const event = JSON.parse(lines[lines.length - 1] ?? '{}');
    expect(event.level).toBe('error');
    expect(event.release).toBe(VERSION);
    expect(event.platform).toBe('node');
    expect(event.message).toMatch(/^lease failed at \[redacted\]/);
    expect(event.contexts.runtime).toEqual({ name: 'node', version: process.version });
    expect(event.contexts.os.name).toBeTypeOf('string');
    const ex = event.exception.values[0];
    expect(ex.type).toBe('Error');
    expect(ex.value).toContain('[redacted]');
    expect(ex.stacktrace.frames.length).toBeGreaterThan(0);
    expect(
      Object.keys(ex.stacktrace.frames[0]).every((k) => ['filename', 'function', 'lineno', 'colno'].includes(k)),
    ).toBe(true);
    expect(event.request).toBeUndefined();
    expect(event.breadcrumbs).toBeUndefined();
    expect(event.extra).toBeUndefined();
    expect(event.server_name).toBeUndefined();
  });

  it('warn and info lines are not reported', async () => {
    const server = await envelopeServer();
    obs = new Observability({ enabled: true, dispatcher: new Agent() });
    const { log } = recordingLogger(obs);
    obs.init(`http://publicreporttoken@127.0.0.1:${server.port}/1`);
    log.warn({ err: new Error('transient') }, 'retrying');
    log.info('hello');
    await obs.flush(2_000);
    expect(server.requests).toHaveLength(0);
  });

  it('a null DSN from the service means nothing is set up', () => {
    obs = new Observability({ enabled: true, dispatcher: new Agent() });
    obs.init(null);
    expect(obs.active).toBe(false);
  });
});
