/**
 * Where the agent gets a suite's archive: from the service, `GET /agent/v1/suite-bundles/{sha256}`
 * with the location key, over the agent's own connection (its proxy). The bytes are checked
 * against the SHA-256 the job names, and the download is capped at SUITE_BUNDLE_MAX_BYTES.
 */
import { createHash } from 'node:crypto';
import { request } from '../http/undici.ts';
import type { PlaywrightCheckDefinition } from '../../shared/checks/types.ts';
import { AGENT_API_PREFIX } from '../../shared/protocol.ts';
import { createServiceDispatcher } from '../client.ts';
import type { SuiteRunnerConfig } from './config.ts';

export interface BundleSource {
  fetch(bundle: PlaywrightCheckDefinition['codeBundle'], signal: AbortSignal): Promise<Buffer>;
}

/** The archive could not be had (the service is unreachable, answered an error, or sent other bytes). */
export class BundleUnavailableError extends Error {
  override readonly name = 'BundleUnavailableError';
}

export function suiteBundlePath(sha256: string): string {
  return `${AGENT_API_PREFIX}/suite-bundles/${encodeURIComponent(sha256)}`;
}

export function verifyBundle(bytes: Buffer, bundle: PlaywrightCheckDefinition['codeBundle']): Buffer {
  const got = createHash('sha256').update(bytes).digest('hex');
  if (got !== bundle.sha256)
    throw new BundleUnavailableError(`the suite archive's SHA-256 is ${got}, the job names ${bundle.sha256}`);
  return bytes;
}

export function serviceBundleSource(config: SuiteRunnerConfig): BundleSource {
  const { apiUrl, apiKey } = config;
  let dispatcher: ReturnType<typeof createServiceDispatcher> | undefined;
  return {
    async fetch(bundle, signal) {
      if (!apiUrl || !apiKey)
        throw new BundleUnavailableError('API_URL and API_KEY are needed to download suite archives');
      if (bundle.size > config.bundleMaxBytes) {
        throw new BundleUnavailableError(
          `the suite archive is ${bundle.size} bytes, over SUITE_BUNDLE_MAX_BYTES (${config.bundleMaxBytes})`,
        );
      }
      dispatcher ??= createServiceDispatcher(config.proxy);
      const url = new URL(suiteBundlePath(bundle.sha256).slice(1), apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`);
      let res: Awaited<ReturnType<typeof request>>;
      try {
        res = await request(url, {
          method: 'GET',
          headers: { authorization: `Bearer ${apiKey}` },
          dispatcher,
          signal,
          bodyTimeout: 60_000,
          headersTimeout: 30_000,
        });
      } catch (err) {
        throw new BundleUnavailableError(`downloading the suite archive failed: ${(err as Error).message}`);
      }
      if (res.statusCode !== 200) {
        const text = (await res.body.text().catch(() => '')).slice(0, 300);
        throw new BundleUnavailableError(`downloading the suite archive failed: HTTP ${res.statusCode} ${text}`);
      }
      const chunks: Buffer[] = [];
      let n = 0;
      for await (const chunk of res.body) {
        n += (chunk as Buffer).length;
        if (n > config.bundleMaxBytes) {
          res.body.destroy();
          throw new BundleUnavailableError(
            `the suite archive is over SUITE_BUNDLE_MAX_BYTES (${config.bundleMaxBytes})`,
          );
        }
        chunks.push(chunk as Buffer);
      }
      return verifyBundle(Buffer.concat(chunks), bundle);
    },
  };
}
