/**
 * The daemon hands runners an artifact collector: what a run adds is referenced from its result,
 * uploaded to the real service, and listed and served there to the owning account. Real service
 * (buildService), real client, uploader and daemon; only the check runner is the test's own.
 */
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { loadArtifactUploaderConfig, openArtifactUploader } from '../../src/agent/artifacts/index.ts';
import type { CheckRunner } from '../../src/agent/checks/runner.ts';
import { ServiceClient } from '../../src/agent/client.ts';
import { AgentDaemon } from '../../src/agent/daemon.ts';
import { ResultSpool } from '../../src/agent/spool.ts';
import { startArtifactService } from '../helpers/artifact-service.ts';
import { passingOutcome } from '../support/passing-outcome.ts';
import { recordingLogger, tempDir } from './helpers.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

it('uploads what a runner adds and references it from the run result', async () => {
  const h = await startArtifactService();
  cleanups.push(() => h.close());
  const t = await h.tenant();
  // One queued run of the tenant's check for the daemon to lease.
  await h.run(t);

  const dir = tempDir('daemon-artifacts-');
  const report = path.join(dir, 'report.txt');
  const content = `run report\n${'line of text\n'.repeat(1000)}`;
  const runner: CheckRunner = {
    checkType: 'API',
    async run(_check, ctx) {
      writeFileSync(report, content);
      const added = await ctx.artifacts?.add({
        name: 'report.txt',
        kind: 'report',
        path: report,
        contentType: 'text/plain',
      });
      expect(added).toBeDefined();
      return passingOutcome(1);
    },
  };

  const { log } = recordingLogger();
  const client = new ServiceClient({
    apiUrl: new URL(h.url),
    apiKey: t.key,
    proxy: { httpProxy: undefined, httpsProxy: undefined, noProxy: undefined },
  });
  cleanups.push(() => client.close());
  const spool = await ResultSpool.open({ dir: path.join(dir, 'spool'), maxBytes: 1 << 20, log });
  const artifacts = await openArtifactUploader({
    config: loadArtifactUploaderConfig({}, path.join(dir, 'spool')),
    apiUrl: new URL(h.url),
    apiKey: t.key,
    dispatcher: client.dispatcher,
    log,
  });
  cleanups.push(() => artifacts.close());
  const daemon = new AgentDaemon({
    client,
    spool,
    log,
    runners: new Map([['API', runner]]),
    uptimeConcurrency: 2,
    jobConcurrency: 1,
    shutdownGraceSeconds: 5,
    useOsDnsResolver: false,
    apiUrl: h.url,
    artifacts,
  });
  cleanups.push(() => daemon.stop('test cleanup'));
  const uploaded = once(artifacts, 'uploaded');
  const delivered = once(daemon, 'result-delivered');
  await daemon.start();
  await Promise.all([uploaded, delivered]);

  const results = await fetch(`${h.url}/v2/check-results/${t.check.id}`, { headers: t.headers });
  const [result] = (
    (await results.json()) as { entries: Array<{ id: string; details?: { artifacts?: Array<{ name: string }> } }> }
  ).entries;
  expect(result?.details?.artifacts?.map((a) => a.name)).toEqual(['report.txt']);
  const manifest = (await (
    await fetch(`${h.url}/v1/check-results/${t.check.id}/${result!.id}/assets`, { headers: t.headers })
  ).json()) as {
    assets: Array<{ name: string; url: string }>;
  };
  expect(manifest.assets.map((a) => a.name)).toEqual(['report.txt']);
  const download = await fetch(`${h.url}/v1/check-results/${t.check.id}/${result!.id}/assets/report.txt`, {
    headers: t.headers,
  });
  expect(download.status).toBe(200);
  expect(await download.text()).toBe(content);
});
