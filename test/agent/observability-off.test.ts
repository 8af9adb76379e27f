/**
 * EXTERNAL_OBSERVABILITY=off, in its own file (its own process under vitest's forks pool) so that no
 * other test has initialised the Sentry global before: "never initialised" is then checkable.
 */
import * as Sentry from '@sentry/node';
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../src/agent/config.ts';
import { Observability } from '../../src/agent/observability.ts';
import { recordingLogger, startServer } from './helpers.ts';

describe('EXTERNAL_OBSERVABILITY=off', () => {
  it('never initialises Sentry and sends nothing at all', async () => {
    const server = await startServer((_req, _body, res) => {
      res.writeHead(200);
      res.end('{}');
    });
    try {
      const config = loadAgentConfig({ API_KEY: 'pl_offtest', EXTERNAL_OBSERVABILITY: 'off' });
      const obs = new Observability({ enabled: config.externalObservability, dispatcher: new Agent() });
      const { log } = recordingLogger(obs);
      obs.init(`http://publicreporttoken@127.0.0.1:${server.port}/1`);
      expect(obs.active).toBe(false);
      expect(Sentry.getClient()).toBeUndefined();
      expect(Sentry.isInitialized()).toBe(false);

      log.error({ err: new Error('request to http://x failed with pl_offtest') }, 'something broke');
      obs.capture(new Error('direct'));
      Sentry.captureException(new Error('even a direct SDK call has no client to send with'));
      expect(await obs.flush(2_000)).toBe(true);
      await Sentry.flush(500);

      expect(server.requests).toHaveLength(0);
    } finally {
      await server.close();
    }
  });
});
