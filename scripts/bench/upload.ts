/**
 * Artifact upload: a 150 MB file through the agent's uploader (src/agent/artifacts/) to a real
 * `outpost serve` process on loopback, against `curl -T` of the same file to the same endpoint.
 * Prints the uploader's throughput, curl's, their ratio, and this process's (the agent side's) RSS
 * growth while uploading. Targets: RSS growth < 32 MB, throughput >= 0.8 x curl's. Also the service's
 * CPU seconds and full garbage collections per upload, and its peak RSS.
 *
 *   npm run bench -- upload [--mb 150] [--repeat 5] [--disk 1]
 *
 * OUTPOST_BENCH_SERVICE_FLAGS (space-separated Node flags, e.g. `--cpu-prof --cpu-prof-dir=DIR`) is
 * passed to the service process, as in `npm run bench -- e2e`.
 *
 * Honest by construction: the ratio is the uploader's MEDIAN against curl's BEST round; the two take
 * turns going first; the files live in memory (see `storageRoot`) so no round inherits another's
 * disk writeback, and every round writes into memory the kernel has already touched (`touchMemory`,
 * `removeStored`); and both are timed the
 * same two ways (`ratio` is the second, as the target is stated; `wholeRatio` the first). `uploadMBps`/`curlMBps`: the whole upload (the uploader: from add() returning to
 * 'uploaded', i.e. its GET for the offset, the PUT, and the queue clean-up; curl: time_total, with its
 * connect). `transferMBps`/`curlTransferMBps`: first body byte to the answer (the uploader's
 * PUT/PATCH calls; curl's time_total - time_pretransfer). add() (a copy into the on-disk queue and a
 * hash, which curl does not do) is reported apart as `addMs`. The load average before and after is
 * printed: figures taken with a load over the core count are not results.
 */
import { execFile } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, statfsSync, unlinkSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { promisify } from 'node:util';
import pino from 'pino';
import { Agent } from 'undici';
import { ArtifactHttp } from '../../src/agent/artifacts/http.ts';
import { ArtifactUploader } from '../../src/agent/artifacts/uploader.ts';
import type { ArtifactUploadStatus } from '../../src/shared/artifacts.ts';
import { Api, createAccount, startService, tempDir, until } from '../../test/e2e/harness.ts';
import { writeRandomFile } from '../../test/helpers/artifact-service.ts';
import { serviceNodeFlags } from './_dist.ts';
import { cpuSeconds, median, metricValue, numberFlags, peakRssMb, roundTo } from './_stats.ts';

const run = promisify(execFile);
const MB = 1024 * 1024;

const loadAverage = () => os.loadavg().map((x) => roundTo(x, 2));
/** CPU seconds of this process's waited-for children (curl), from /proc/self/stat (cutime, cstime). */
function childrenCpuSeconds(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[13]) + Number(fields[14])) / 100;
}
/**
 * Full (mark-compact) collections of the service so far, from its /metrics (prom-client's
 * nodejs_gc_duration_seconds, kind "major"): every body chunk the service receives is a new buffer
 * outside V8's heap, and V8 marks the whole heap again and again to count them free. 0 before the
 * first one (the histogram has no "major" series yet), NaN (null in the JSON) without the metric.
 */
async function serviceMajorGcs(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const family = 'outpost_service_nodejs_gc_duration_seconds';
  if (!text.includes(`# TYPE ${family} histogram`)) return Number.NaN;
  const count = metricValue(text, `${family}_count{kind="major"}`);
  return Number.isNaN(count) ? 0 : count;
}
const ownCpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/** The uploader's HTTP calls, with the time its PUT/PATCH bodies were on the wire summed up. */
function timedHttp(http: ArtifactHttp): { http: Pick<ArtifactHttp, 'status' | 'start' | 'append'>; take(): number } {
  let bodyMs = 0;
  const timed = async (call: () => Promise<ArtifactUploadStatus>) => {
    const t0 = performance.now();
    try {
      return await call();
    } finally {
      bodyMs += performance.now() - t0;
    }
  };
  return {
    http: {
      status: (...a) => http.status(...a),
      start: (...a) => timed(() => http.start(...a)),
      append: (...a) => timed(() => http.append(...a)),
    },
    take: () => {
      const ms = bodyMs;
      bodyMs = 0;
      return ms;
    },
  };
}

interface Round {
  agentMBps: number;
  agentTransferMBps: number;
  addMs: number;
  rssGrowthMb: number;
  /** CPU seconds of the uploader's process and of the service during the upload (after add). */
  agentCpuS: number;
  serviceCpuS: number;
  serviceMajorGcs: number;
}

interface CurlRound {
  curlMBps: number;
  curlTransferMBps: number;
  curlCpuS: number;
  serviceCpuS: number;
  serviceMajorGcs: number;
}

interface Bench {
  size: number;
  uploader: ArtifactUploader;
  timing: ReturnType<typeof timedHttp>;
  file: string;
  sha256: string;
  runId: string;
  url: string;
  key: string;
  servicePid: number;
}

/** One upload through the agent's uploader, timed, with the RSS it grew by. */
async function agentRound(b: Bench, name: string): Promise<Round> {
  global.gc?.();
  const baseline = process.memoryUsage.rss();
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 20);
  const done = new Promise<number>((resolve, reject) => {
    b.uploader.on('uploaded', (e: { name: string }) => e.name === name && resolve(performance.now()));
    b.uploader.on('dropped', (e: { name: string; reason: string }) => e.name === name && reject(new Error(e.reason)));
  });
  const t0 = performance.now();
  const added = await b.uploader.add(b.runId, { name, kind: 'video', path: b.file, contentType: 'video/webm' });
  if (!added.ok || added.ref.sha256 !== b.sha256) throw new Error(`add failed: ${JSON.stringify(added)}`);
  const t1 = performance.now();
  b.timing.take();
  const cpu0 = [ownCpuSeconds(), cpuSeconds(b.servicePid), await serviceMajorGcs(b.url)];
  const t2 = await done;
  const cpu1 = [ownCpuSeconds(), cpuSeconds(b.servicePid), await serviceMajorGcs(b.url)];
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage.rss());
  return {
    agentMBps: b.size / MB / ((t2 - t1) / 1000),
    agentTransferMBps: b.size / MB / (b.timing.take() / 1000),
    addMs: t1 - t0,
    rssGrowthMb: (peak - baseline) / MB,
    agentCpuS: (cpu1[0] ?? 0) - (cpu0[0] ?? 0),
    serviceCpuS: (cpu1[1] ?? 0) - (cpu0[1] ?? 0),
    serviceMajorGcs: (cpu1[2] ?? 0) - (cpu0[2] ?? 0),
  };
}

/** curl, same file, same endpoint, same headers. */
async function curlRound(b: Bench, name: string): Promise<CurlRound> {
  const cpu0 = [childrenCpuSeconds(), cpuSeconds(b.servicePid), await serviceMajorGcs(b.url)];
  const { stdout } = await run('curl', [
    '-sS',
    '--fail-with-body',
    '-o',
    '/dev/null',
    '-w',
    '%{time_total} %{time_pretransfer}',
    '-T',
    b.file,
    '-H',
    `authorization: Bearer ${b.key}`,
    '-H',
    'content-type: video/webm',
    '-H',
    `upload-length: ${b.size}`,
    '-H',
    'x-artifact-kind: video',
    '-H',
    `x-artifact-sha256: ${b.sha256}`,
    // curl waits up to 1 s for a 100 Continue before large bodies; not part of the transfer.
    '-H',
    'Expect:',
    `${b.url}/agent/v1/runs/${b.runId}/artifacts/${name}`,
  ]);
  const cpu1 = [childrenCpuSeconds(), cpuSeconds(b.servicePid), await serviceMajorGcs(b.url)];
  const [total, pretransfer] = stdout.trim().split(' ').map(Number) as [number, number];
  return {
    curlMBps: b.size / MB / total,
    curlTransferMBps: b.size / MB / (total - pretransfer),
    curlCpuS: (cpu1[0] ?? 0) - (cpu0[0] ?? 0),
    serviceCpuS: (cpu1[1] ?? 0) - (cpu0[1] ?? 0),
    serviceMajorGcs: (cpu1[2] ?? 0) - (cpu0[2] ?? 0),
  };
}

async function firstRun(serviceDir: string): Promise<string> {
  // A new check runs once right away: that run is what the artifacts belong to.
  return until(
    async () => {
      const db = new DatabaseSync(path.join(serviceDir, 'outpost.db'), { readOnly: true });
      try {
        return (db.prepare('SELECT run_id FROM runs LIMIT 1').get() as { run_id: string } | undefined)?.run_id;
      } finally {
        db.close();
      }
    },
    { what: 'the first run' },
  );
}

function summary(
  opts: { mb: number; repeat: number },
  storage: string,
  url: string,
  rounds: Round[],
  curl: CurlRound[],
  load: Record<string, number[]>,
  serviceRssPeakMb: number,
) {
  const agent = median(rounds.map((r) => r.agentMBps));
  const agentTransfer = median(rounds.map((r) => r.agentTransferMBps));
  const curlBest = Math.max(...curl.map((c) => c.curlMBps));
  const curlTransferBest = Math.max(...curl.map((c) => c.curlTransferMBps));
  const rss = Math.max(...rounds.map((r) => r.rssGrowthMb));
  return {
    workload: `${opts.mb} MB random bytes, PUT to ${url} (outpost serve, loopback), ${opts.repeat} rounds each, taking turns first; uploader median vs curl best; CPU seconds per upload`,
    storage,
    // The ratio that counts: first body byte to answer, the uploader's median against curl's best.
    transferMBps: roundTo(agentTransfer, 1),
    curlTransferMBps: roundTo(curlTransferBest, 1),
    ratio: roundTo(agentTransfer / curlTransferBest, 2),
    // The same for the whole upload (the uploader's offset GET and queue clean-up, curl's connect).
    uploadMBps: roundTo(agent, 1),
    curlMBps: roundTo(curlBest, 1),
    wholeRatio: roundTo(agent / curlBest, 2),
    ratioTarget: 0.8,
    rssGrowthMb: roundTo(rss, 1),
    rssGrowthTargetMb: 32,
    addMs: roundTo(median(rounds.map((r) => r.addMs)), 0),
    // CPU per upload (medians): what each client costs, and what the service spends on each one's bytes.
    cpuSeconds: {
      uploader: roundTo(median(rounds.map((r) => r.agentCpuS)), 2),
      serviceForUploader: roundTo(median(rounds.map((r) => r.serviceCpuS)), 2),
      curl: roundTo(median(curl.map((c) => c.curlCpuS)), 2),
      serviceForCurl: roundTo(median(curl.map((c) => c.serviceCpuS)), 2),
    },
    // The service's full collections per upload (medians) and its peak RSS over the whole benchmark.
    serviceMajorGcs: {
      forUploader: median(rounds.map((r) => r.serviceMajorGcs)),
      forCurl: median(curl.map((c) => c.serviceMajorGcs)),
    },
    serviceRssPeakMb,
    loadAverage: load,
    rounds: {
      uploadMBps: rounds.map((r) => roundTo(r.agentMBps, 1)),
      transferMBps: rounds.map((r) => roundTo(r.agentTransferMBps, 1)),
      curlMBps: curl.map((c) => roundTo(c.curlMBps, 1)),
      curlTransferMBps: curl.map((c) => roundTo(c.curlTransferMBps, 1)),
      rssGrowthMb: rounds.map((r) => roundTo(r.rssGrowthMb, 1)),
    },
    pass: agentTransfer >= 0.8 * curlTransferBest && rss < 32,
  };
}

/**
 * Writes and deletes `bytes` of zeros under `root`, so that the memory the rounds' files take has been
 * touched once before the first round. On a freshly booted virtual machine, the first write to a page
 * costs about ten times a later one (dd into /dev/shm: 320 MB/s for new memory, 3.3 GB/s for memory
 * freed by an earlier file; BENCHMARKS.md "Artifact upload"), which made whichever round got new
 * memory the slow one.
 */
function touchMemory(root: string, bytes: number): void {
  const file = path.join(root, `outpost-bench-touch-${process.pid}`);
  const zeros = Buffer.alloc(8 * MB);
  const fd = openSync(file, 'w');
  try {
    for (let written = 0; written < bytes; written += zeros.length) writeSync(fd, zeros);
  } finally {
    closeSync(fd);
    unlinkSync(file);
  }
}

/**
 * Deletes the service's stored copy of artifact `name` after its round, so every round's upload
 * writes into memory freed by the round before (see `touchMemory`) instead of each client's rounds
 * taking new memory in turn: the uploader's queue copy is deleted after its upload and curl has none,
 * so keeping the stored copies handed curl's rounds the memory the uploader had just freed.
 */
function removeStored(serviceDir: string, name: string): void {
  const found = readdirSync(serviceDir, { recursive: true, encoding: 'utf8' }).filter(
    (entry) => path.basename(entry) === name,
  );
  if (found.length !== 1)
    throw new Error(`expected one stored copy of ${name} under ${serviceDir}, found ${found.length}`);
  unlinkSync(path.join(serviceDir, found[0] as string));
}

/**
 * Where the service's artifacts, the agent's queue and the source file go: a memory file system
 * (/dev/shm) when it has room for every round, unless `--disk 1`. On a disk, how fast a round writes
 * depends on how much the rounds before it left for the kernel to write back, so the first round of
 * a run was far faster than the rest, whichever client had it (BENCHMARKS.md "Artifact upload").
 */
function storageRoot(disk: boolean, needBytes: number): { root: string; storage: string } {
  const shm = '/dev/shm';
  if (!disk && existsSync(shm)) {
    const { bavail, bsize } = statfsSync(shm);
    if (bavail * bsize > needBytes) return { root: shm, storage: 'memory (tmpfs /dev/shm)' };
  }
  return { root: os.tmpdir(), storage: `disk (${os.tmpdir()})` };
}

export async function run_(args: string[]): Promise<Record<string, unknown>> {
  const opts = numberFlags(args, { mb: 150, repeat: 5, disk: 0 });
  const size = Math.round(opts.mb * MB);
  // The source, a round's queue copy and stored copy (removeStored deletes it), with room to spare.
  const { root, storage } = storageRoot(opts.disk > 0, size * 5);
  const data = await tempDir('bench-upload', root);
  const serviceDir = path.join(data.dir, 'service');
  const service = await startService(
    {
      DATA_DIR: serviceDir,
      LOG_LEVEL: 'INFO',
      ARTIFACT_MAX_BYTES: String(Math.max(size, 150 * MB)),
    },
    serviceNodeFlags(),
  );
  const dispatcher = new Agent({ keepAliveTimeout: 10_000 });
  let uploader: ArtifactUploader | undefined;
  try {
    const api = new Api(service.url, await createAccount(serviceDir));
    const location = await api.createLocation('bench');
    await api.createApiCheck({
      name: 'bench',
      frequency: 10,
      privateLocations: ['bench'],
      request: { method: 'GET', url: 'http://127.0.0.1:9/' },
    });
    const runId = await firstRun(serviceDir);
    const file = path.join(data.dir, 'video.webm');
    const sha256 = await writeRandomFile(file, size);
    const timing = timedHttp(new ArtifactHttp({ apiUrl: new URL(service.url), apiKey: location.key, dispatcher }));
    uploader = await ArtifactUploader.open({
      config: { maxBytes: size, queueDir: path.join(data.dir, 'spool', 'artifacts'), queueMaxBytes: 4 * size },
      http: timing.http,
      log: pino({ level: 'warn' }),
    });
    const servicePid = service.proc.child.pid;
    if (servicePid === undefined) throw new Error('the service process has no pid');
    const b: Bench = { size, uploader, timing, file, sha256, runId, url: service.url, key: location.key, servicePid };
    const load: Record<string, number[]> = { before: loadAverage() };
    const rounds: Round[] = [];
    const curl: CurlRound[] = [];
    const curlTurn = async (i: number) => {
      curl.push(await curlRound(b, `curl-${i}.webm`));
      removeStored(serviceDir, `curl-${i}.webm`);
    };
    touchMemory(root, size * 3);
    for (let i = 0; i < opts.repeat; i++) {
      if (i % 2 === 1) await curlTurn(i);
      rounds.push(await agentRound(b, `agent-${i}.webm`));
      removeStored(serviceDir, `agent-${i}.webm`);
      if (i % 2 === 0) await curlTurn(i);
    }
    load.after = loadAverage();
    return summary(opts, storage, service.url, rounds, curl, load, peakRssMb(servicePid));
  } finally {
    await uploader?.close();
    await dispatcher.close();
    await service.proc.stop();
    await data.remove();
  }
}

export { run_ as run };
