/**
 * `stackTest`: vitest's `test` with the end-to-end stack most e2e files run against, shared by the
 * file's tests: a data directory, `outpost serve` on it, an Api client of an account made with the CLI,
 * a private location and `outpost agent` serving it, and `target`, an HTTP server on loopback for the
 * checks to call. Stopped and removed after the file's last test.
 */
import type { RequestListener } from 'node:http';
import { test } from 'vitest';
import { Api, createAccount, freePort, startAgent, startService, startTarget, tempDir } from '../e2e/harness.ts';

export interface StackOptions {
  /** Names the data directory (`outpost-<name>-…`). */
  name: string;
  /** The slugName of the private location the agent serves. */
  location: string;
  /** How `target` answers; 200 "ok" unless given. */
  target?: RequestListener;
  /** Serve on a port picked here and set PUBLIC_URL to it (for the URLs the service hands out: DSNs, links). */
  publicUrl?: boolean;
  /** Settings of the agent besides its key, service URL and spool. */
  agentEnv?: Record<string, string>;
}

const answerOk: RequestListener = (_req, res) => void res.writeHead(200).end('ok');

/** The service's settings besides DATA_DIR: a port and PUBLIC_URL at it, when the file asks for them. */
async function publicUrlEnv(publicUrl: boolean): Promise<Record<string, string>> {
  if (!publicUrl) return {};
  const port = await freePort();
  return { PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` };
}

export function stackTest({
  name,
  location: slugName,
  target = answerOk,
  publicUrl = false,
  agentEnv = {},
}: StackOptions) {
  const stack = test
    // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; data has none.
    .extend('data', { scope: 'file' }, async ({}, { onCleanup }) => {
      const data = await tempDir(name);
      onCleanup(() => data.remove());
      return data;
    })
    .extend('service', { scope: 'file' }, async ({ data }, { onCleanup }) => {
      const service = await startService({ DATA_DIR: data.dir, ...(await publicUrlEnv(publicUrl)) });
      onCleanup(async () => {
        await service.proc.stop();
      });
      return service;
    })
    .extend('api', { scope: 'file' }, async ({ data, service }) => new Api(service.url, await createAccount(data.dir)))
    .extend('location', { scope: 'file' }, ({ api }) => api.createLocation(slugName))
    // Auto: the agent runs whether or not a test names it.
    .extend('agent', { scope: 'file', auto: true }, ({ data, service, location }, { onCleanup }) => {
      const agent = startAgent({
        API_KEY: location.key,
        API_URL: service.url,
        SPOOL_DIR: `${data.dir}/spool`,
        ...agentEnv,
      });
      onCleanup(async () => {
        await agent.stop();
      });
      return agent;
    })
    // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern; target has none.
    .extend('target', { scope: 'file' }, async ({}, { onCleanup }) => {
      const server = await startTarget(target);
      onCleanup(() => server.close());
      return server;
    });
  return stack;
}
