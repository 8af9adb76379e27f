/**
 * src/agent/http/undici.ts takes undici's parts from its lib/ files instead of its index (to keep
 * fetch, WebSocket, caches and mocks out of an idle agent). These tests fail, naming the file, if an
 * undici upgrade moves or changes any of them, and check that the agent's modules load neither
 * undici's index nor Node's own bundled undici (which an ES import of node:http pulls in).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as undici from 'undici';
import { describe, expect, it } from 'vitest';
import { Agent, Client, EnvHttpProxyAgent, request, UNDICI_LIB_FILES } from '../../src/agent/http/undici.ts';
import { makeSelfSigned } from './api-fixtures.ts';

const require = createRequire(import.meta.url);

describe('undici lib layout used by src/agent/http/undici.ts', () => {
  it.each(Object.entries(UNDICI_LIB_FILES))('%s is still at %s', (_name, file) => {
    expect(() => require.resolve(file), `undici no longer has ${file}; update src/agent/http/undici.ts`).not.toThrow();
  });

  it('exports the same classes as undici itself', () => {
    expect(Client).toBe(undici.Client);
    expect(Agent).toBe(undici.Agent);
    expect(EnvHttpProxyAgent).toBe(undici.EnvHttpProxyAgent);
    expect(typeof Client.prototype.request).toBe('function');
  });

  it('request() sends through the given dispatcher', async () => {
    const http = await import('node:http');
    const server = http.createServer((req, res) => res.end(`${req.method} ${req.url}`));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    const dispatcher = new Agent();
    try {
      const res = await request(`http://127.0.0.1:${port}/a?b=1`, { method: 'POST', dispatcher, body: 'x' });
      expect(res.statusCode).toBe(200);
      expect(await res.body.text()).toBe('POST /a?b=1');
    } finally {
      await dispatcher.close();
      await new Promise((r) => server.close(r));
    }
  });

  it("the agent's modules load neither undici's index nor Node's bundled undici", () => {
    // A fresh process: vitest itself has loaded both by now.
    const script = `
      const main = ${JSON.stringify(new URL('../../src/agent/main.ts', import.meta.url).href)};
      await import(main);
      const { createRequire } = await import('node:module');
      const cache = Object.keys(createRequire(import.meta.url).cache);
      console.log(JSON.stringify({
        undiciIndex: cache.some((f) => /node_modules\\/undici\\/index\\.js$/.test(f)),
        bundledUndici: process.moduleLoadList.includes('NativeModule internal/deps/undici/undici'),
        http2: process.moduleLoadList.includes('NativeModule http2'),
      }));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(
      JSON.parse(out.trim().split('\n').at(-1)!),
      "an agent module imports 'undici' (take it from src/agent/http/undici.ts) or ES-imports node:http (use process.getBuiltinModule)",
    ).toEqual({ undiciIndex: false, bundledUndici: false, http2: false });
  });

  it("client.js takes client-h2.js's one export and calls it only to connect (what the deferral of HTTP/2 relies on)", () => {
    const source = readFileSync(require.resolve(UNDICI_LIB_FILES.Client), 'utf8');
    expect(source).toContain("const connectH2 = require('./client-h2.js')");
    const uses = source.match(/\bconnectH2\b[^\n]*/g) ?? [];
    expect(
      uses
        .filter((u) => !u.startsWith("connectH2 = require('./client-h2.js')"))
        .every((u) => u.startsWith('connectH2(client, socket)')),
    ).toBe(true);
    expect(typeof require(UNDICI_LIB_FILES.ClientH2)).toBe('function');
  });

  it('loads node:http2 only when a connection negotiates h2, and then speaks it', () => {
    // A fresh process, so that undici.ts is the first to load undici (vitest has loaded its index).
    const tls = makeSelfSigned();
    const script = `
      const { Agent, request } = await import(${JSON.stringify(new URL('../../src/agent/http/undici.ts', import.meta.url).href)});
      const http = process.getBuiltinModule('node:http');
      const { key, cert } = JSON.parse(process.env.TLS);
      const loaded = () => process.moduleLoadList.includes('NativeModule http2');
      const plain = http.createServer((req, res) => res.end('h1'));
      await new Promise((r) => plain.listen(0, '127.0.0.1', r));
      const agent = new Agent({ connect: { ca: cert } });
      const one = await request('http://127.0.0.1:' + plain.address().port + '/', { method: 'GET', dispatcher: agent });
      const afterH1 = { body: await one.body.text(), http2: loaded() };
      const http2 = process.getBuiltinModule('node:http2');
      const h2 = http2.createSecureServer({ key, cert, allowHTTP1: false }, (req, res) => res.end('over ' + req.httpVersion));
      await new Promise((r) => h2.listen(0, '127.0.0.1', r));
      const two = await request('https://localhost:' + h2.address().port + '/', { method: 'GET', dispatcher: agent });
      console.log(JSON.stringify({ afterH1, h2: { status: two.statusCode, body: await two.body.text() } }));
      await agent.close(); plain.close(); h2.close();`;
    // The script loads node:http2 itself for its server, after the first request has been answered.
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { ...process.env, TLS: JSON.stringify(tls) },
    });
    expect(JSON.parse(out.trim().split('\n').at(-1)!)).toEqual({
      afterH1: { body: 'h1', http2: false },
      h2: { status: 200, body: 'over 2.0' },
    });
  });

  it('an API check offers h2 by ALPN, yet node:http2 loads only once a server chooses it', () => {
    const tls = makeSelfSigned();
    const script = `
      const { apiCheckRunner } = await import(${JSON.stringify(new URL('../../src/agent/checks/api.ts', import.meta.url).href)});
      // Not api-fixtures.ts: its ES import of node:http loads Node's bundled undici, which loads http2.
      const { pino } = await import('pino');
      const apiCheck = ({ url }) => ({ id: 'c', accountId: 'a', name: 'h2', checkType: 'API', shouldFail: false, runtimeId: null,
        degradedResponseTime: 10000, maxResponseTime: 20000, request: { method: 'GET', url, skipSSL: true, followRedirects: true,
        ipFamily: 'IPv4', body: '', bodyType: 'NONE', headers: [], queryParameters: [], assertions: [], basicAuth: null } });
      const context = () => ({ signal: new AbortController().signal, timeoutMs: 10000, log: pino({ level: 'silent' }), useOsDnsResolver: false });
      const https = process.getBuiltinModule('node:https');
      const { key, cert } = JSON.parse(process.env.TLS);
      const loaded = () => process.moduleLoadList.includes('NativeModule http2');
      const h1 = https.createServer({ key, cert }, (req, res) => res.end('h1'));
      await new Promise((r) => h1.listen(0, '127.0.0.1', r));
      const one = await apiCheckRunner.run(apiCheck({ url: 'https://127.0.0.1:' + h1.address().port + '/' }), context());
      const afterH1 = { httpVersion: one.apiCheckResult.response.httpVersion, http2: loaded() };
      const http2 = process.getBuiltinModule('node:http2');
      const h2 = http2.createSecureServer({ key, cert, allowHTTP1: false }, (req, res) => res.end('over ' + req.httpVersion));
      await new Promise((r) => h2.listen(0, '127.0.0.1', r));
      const two = await apiCheckRunner.run(apiCheck({ url: 'https://127.0.0.1:' + h2.address().port + '/' }), context());
      console.log(JSON.stringify({ afterH1, h2: { httpVersion: two.apiCheckResult.response.httpVersion, body: two.apiCheckResult.response.body } }));
      h1.close(); h2.close();`;
    // As above, the script loads node:http2 itself for its server, after the h1 check has run.
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { ...process.env, TLS: JSON.stringify(tls) },
    });
    expect(JSON.parse(out.trim().split('\n').at(-1)!)).toEqual({
      afterH1: { httpVersion: '1.1', http2: false },
      h2: { httpVersion: '2', body: 'over 2.0' },
    });
  });
});
