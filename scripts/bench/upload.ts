/**
 * Artifact upload: a 150 MB file through the agent's uploader (src/agent/artifacts/) to a real
 * `outpost serve` process on loopback, against `curl -T` of the same file to the same endpoint.
 * Prints the uploader's throughput, curl's, their ratio, and this process's (the agent side's) RSS
 * growth while uploading. Targets: RSS growth < 32 MB, throughput >= 0.8 x curl's.
 *
 *   npm run bench -- upload [--mb 150] [--repeat 3]
 *
 * `uploadMBps` is the transfer (PUT/PATCH until the service has verified every byte); the
 * uploader's add() (a streamed copy into the on-disk queue while hashing) is reported apart as
 * `addMs`, since curl does neither.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { promisify } from 'node:util';
import pino from 'pino';
import { Agent } from 'undici';
import { ArtifactHttp } from '../../src/agent/artifacts/http.ts';
import { ArtifactUploader } from '../../src/agent/artifacts/uploader.ts';
import { Api, createAccount, startService, tempDir, until } from '../../test/e2e/harness.ts';
import { writeRandomFile } from '../../test/helpers/artifact-service.ts';
import { numberFlags } from './_stats.ts';

const run = promisify(execFile);
const MB = 1024 * 1024;

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)] ?? Number.NaN;
}
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

export async function run_(args: string[]): Promise<Record<string, unknown>> {
  const opts = numberFlags(args, { mb: 150, repeat: 3 });
  const size = Math.round(opts.mb * MB);
  const data = await tempDir('bench-upload');
  const service = await startService({ DATA_DIR: path.join(data.dir, 'service'), LOG_LEVEL: 'INFO', ARTIFACT_MAX_BYTES: String(Math.max(size, 150 * MB)) });
  const dispatcher = new Agent({ keepAliveTimeout: 10_000 });
  let uploader: ArtifactUploader | undefined;
  try {
    const api = new Api(service.url, await createAccount(path.join(data.dir, 'service')));
    const location = await api.createLocation('bench');
    // A new check runs once right away: that run is what the artifacts belong to.
    await api.createApiCheck({ name: 'bench', frequency: 10, privateLocations: ['bench'], request: { method: 'GET', url: 'http://127.0.0.1:9/' } });
    const runId = await until(
      async () => {
        const db = new DatabaseSync(path.join(data.dir, 'service', 'outpost.db'), { readOnly: true });
        try {
          return (db.prepare('SELECT run_id FROM runs LIMIT 1').get() as { run_id: string } | undefined)?.run_id;
        } finally {
          db.close();
        }
      },
      { what: 'the first run' },
    );
    const file = path.join(data.dir, 'video.webm');
    const sha256 = await writeRandomFile(file, size);

    uploader = await ArtifactUploader.open({
      config: { maxBytes: size, queueDir: path.join(data.dir, 'spool', 'artifacts'), queueMaxBytes: 4 * size },
      http: new ArtifactHttp({ apiUrl: new URL(service.url), apiKey: location.key, dispatcher }),
      log: pino({ level: 'warn' }),
    });
    const agentMBps: number[] = [];
    const curlMBps: number[] = [];
    const addMs: number[] = [];
    const rssGrowthMb: number[] = [];
    for (let i = 0; i < opts.repeat; i++) {
      // --- the agent's uploader
      const name = `agent-${i}.webm`;
      global.gc?.();
      const baseline = process.memoryUsage.rss();
      let peak = baseline;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage.rss());
      }, 20);
      const done = new Promise<number>((resolve, reject) => {
        uploader!.on('uploaded', (e: { name: string }) => e.name === name && resolve(performance.now()));
        uploader!.on('dropped', (e: { name: string; reason: string }) => e.name === name && reject(new Error(e.reason)));
      });
      const t0 = performance.now();
      const added = await uploader.add(runId, { name, kind: 'video', path: file, contentType: 'video/webm' });
      if (!added.ok || added.ref.sha256 !== sha256) throw new Error(`add failed: ${JSON.stringify(added)}`);
      const t1 = performance.now();
      const t2 = await done;
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage.rss());
      addMs.push(t1 - t0);
      agentMBps.push(size / MB / ((t2 - t1) / 1000));
      rssGrowthMb.push((peak - baseline) / MB);

      // --- curl, same file, same endpoint, same headers
      const { stdout } = await run('curl', [
        '-sS',
        '--fail-with-body',
        '-o',
        '/dev/null',
        '-w',
        '%{time_total}',
        '-T',
        file,
        '-H',
        `authorization: Bearer ${location.key}`,
        '-H',
        'content-type: video/webm',
        '-H',
        `upload-length: ${size}`,
        '-H',
        'x-artifact-kind: video',
        '-H',
        `x-artifact-sha256: ${sha256}`,
        // curl waits up to 1 s for a 100 Continue before large bodies; not part of the transfer.
        '-H',
        'Expect:',
        `${service.url}/agent/v1/runs/${runId}/artifacts/curl-${i}.webm`,
      ]);
      curlMBps.push(size / MB / Number(stdout.trim()));
    }
    const agent = median(agentMBps);
    const curl = median(curlMBps);
    const rss = Math.max(...rssGrowthMb);
    return {
      workload: `${opts.mb} MB random bytes, PUT to ${service.url} (outpost serve, loopback), ${opts.repeat} rounds, medians`,
      uploadMBps: round(agent),
      curlMBps: round(curl),
      ratio: round(agent / curl, 2),
      ratioTarget: 0.8,
      rssGrowthMb: round(rss),
      rssGrowthTargetMb: 32,
      addMs: round(median(addMs), 0),
      rounds: { uploadMBps: agentMBps.map((x) => round(x)), curlMBps: curlMBps.map((x) => round(x)), rssGrowthMb: rssGrowthMb.map((x) => round(x)) },
      pass: agent >= 0.8 * curl && rss < 32,
    };
  } finally {
    await uploader?.close();
    await dispatcher.close();
    await service.proc.stop();
    await data.remove();
  }
}

export { run_ as run };
