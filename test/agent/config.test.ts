import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SPOOL_MAX_BYTES, loadAgentConfig } from '../../src/agent/config.ts';
import { ConfigError } from '../../src/shared/errors.ts';
import { tempDir } from './helpers.ts';

const KEY = 'pl_0123456789abcdef';

function configError(env: Record<string, string>): ConfigError {
  try {
    loadAgentConfig({ API_KEY: KEY, ...env }, '/srv');
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}`);
}

describe('loadAgentConfig', () => {
  it('applies every default', () => {
    const c = loadAgentConfig({ API_KEY: KEY }, '/srv');
    expect(c.apiKey).toBe(KEY);
    expect(c.apiUrl.toString()).toBe('http://localhost:8080/');
    expect(c.jobConcurrency).toBe(1);
    expect(c.uptimeConcurrency).toBe(200);
    expect(c.logLevel).toBe('INFO');
    expect(c.healthPort).toBe(8081);
    expect(c.healthHost).toBe('0.0.0.0');
    expect(c.proxy).toEqual({ httpProxy: undefined, httpsProxy: undefined, noProxy: undefined });
    expect(c.extraCaCerts).toBeUndefined();
    expect(c.externalObservability).toBe(true);
    expect(c.shutdownGraceSeconds).toBe(30);
    expect(c.spoolDir).toBe('/srv/.outpost/spool');
    expect(c.spoolMaxBytes).toBe(DEFAULT_SPOOL_MAX_BYTES);
    expect(DEFAULT_SPOOL_MAX_BYTES).toBe(256 * 1024 * 1024);
    expect(c.useOsDnsResolver).toBe(false);
  });

  it('reads every variable', () => {
    const dir = tempDir();
    const ca = join(dir, 'ca.pem');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\n');
    const c = loadAgentConfig(
      {
        API_KEY: KEY,
        API_URL: 'https://outpost.example.com',
        JOB_CONCURRENCY: '10',
        UPTIME_CONCURRENCY: '500',
        LOG_LEVEL: 'debug',
        AGENT_HEALTH_PORT: '0',
        AGENT_HEALTH_HOST: '127.0.0.1',
        HTTPS_PROXY: 'http://proxy.internal:3128',
        http_proxy: 'http://lower.internal:3128',
        HTTP_PROXY: 'http://upper.internal:3128',
        NO_PROXY: 'localhost,.internal',
        NODE_EXTRA_CA_CERTS: ca,
        EXTERNAL_OBSERVABILITY: 'off',
        SHUTDOWN_GRACE_SECONDS: '0',
        SPOOL_DIR: '/var/lib/outpost/spool',
        SPOOL_MAX_BYTES: '1048576',
        USE_OS_DNS_RESOLVER: 'true',
      },
      '/srv',
    );
    expect(c.apiUrl.host).toBe('outpost.example.com');
    expect(c.jobConcurrency).toBe(10);
    expect(c.uptimeConcurrency).toBe(500);
    expect(c.logLevel).toBe('DEBUG');
    expect(c.healthPort).toBe(0);
    expect(c.healthHost).toBe('127.0.0.1');
    // Lowercase wins over uppercase, as undici and curl do.
    expect(c.proxy.httpProxy).toBe('http://lower.internal:3128/');
    expect(c.proxy.httpsProxy).toBe('http://proxy.internal:3128/');
    expect(c.proxy.noProxy).toBe('localhost,.internal');
    expect(c.extraCaCerts).toBe(ca);
    expect(c.externalObservability).toBe(false);
    expect(c.shutdownGraceSeconds).toBe(0);
    expect(c.spoolDir).toBe('/var/lib/outpost/spool');
    expect(c.spoolMaxBytes).toBe(1048576);
    expect(c.useOsDnsResolver).toBe(true);
  });

  it('accepts LOG as a level and on as observability', () => {
    const c = loadAgentConfig({ API_KEY: KEY, LOG_LEVEL: 'LOG', EXTERNAL_OBSERVABILITY: 'ON' });
    expect(c.logLevel).toBe('LOG');
    expect(c.externalObservability).toBe(true);
  });

  it('treats empty strings as unset', () => {
    const c = loadAgentConfig({ API_KEY: KEY, JOB_CONCURRENCY: '', API_URL: ' ' });
    expect(c.jobConcurrency).toBe(1);
    expect(c.apiUrl.toString()).toBe('http://localhost:8080/');
  });

  it('requires API_KEY', () => {
    expect(() => loadAgentConfig({})).toThrow(ConfigError);
    try {
      loadAgentConfig({});
    } catch (err) {
      expect((err as ConfigError).setting).toBe('API_KEY');
      expect((err as ConfigError).message).toMatch(/API_KEY is required/);
    }
  });

  it('rejects a key that is not a private location key, without echoing it', () => {
    try {
      loadAgentConfig({ API_KEY: 'sk_live_secret' });
      throw new Error('not thrown');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).setting).toBe('API_KEY');
      expect((err as ConfigError).message).toMatch(/pl_/);
      expect((err as ConfigError).message).not.toContain('sk_live_secret');
    }
  });

  const bad: Array<[string, string, RegExp]> = [
    ['API_URL', 'not a url', /API_URL/],
    ['API_URL', 'ftp://example.com', /http:\/\/ or https:\/\//],
    ['JOB_CONCURRENCY', '0', /1 to 10/],
    ['JOB_CONCURRENCY', '11', /1 to 10/],
    ['JOB_CONCURRENCY', 'two', /whole number/],
    ['UPTIME_CONCURRENCY', '0', /1 to 500/],
    ['UPTIME_CONCURRENCY', '501', /1 to 500/],
    ['UPTIME_CONCURRENCY', '1.5', /whole number/],
    ['LOG_LEVEL', 'TRACE', /DEBUG, LOG, INFO, WARN, ERROR/],
    ['AGENT_HEALTH_PORT', '65536', /0 to 65535/],
    ['AGENT_HEALTH_PORT', '-1', /0 to 65535/],
    ['HTTPS_PROXY', 'not a url', /HTTPS_PROXY/],
    ['https_proxy', 'socks://x', /https_proxy/],
    ['HTTP_PROXY', '::', /HTTP_PROXY/],
    ['http_proxy', 'nope', /http_proxy/],
    ['NODE_EXTRA_CA_CERTS', '/nonexistent/ca.pem', /readable file/],
    ['EXTERNAL_OBSERVABILITY', 'maybe', /on or off/],
    ['EXTERNAL_OBSERVABILITY', 'false', /on or off/],
    ['SHUTDOWN_GRACE_SECONDS', '-5', /0 to 3600/],
    ['SHUTDOWN_GRACE_SECONDS', 'soon', /whole number/],
    ['SPOOL_MAX_BYTES', '100', /65536/],
    ['SPOOL_MAX_BYTES', '1GB', /whole number/],
    ['USE_OS_DNS_RESOLVER', 'sometimes', /true or false/],
  ];
  for (const [name, value, allowed] of bad) {
    it(`rejects ${name}=${JSON.stringify(value)}`, () => {
      const err = configError({ [name]: value });
      expect(err.setting).toBe(name);
      expect(err.message).toContain(name);
      expect(err.message).toMatch(allowed);
    });
  }

  it('rejects NODE_EXTRA_CA_CERTS pointing at a directory', () => {
    const err = configError({ NODE_EXTRA_CA_CERTS: tempDir() });
    expect(err.setting).toBe('NODE_EXTRA_CA_CERTS');
  });
});
