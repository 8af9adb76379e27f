/**
 * For artifact tests: a real service (buildService) on loopback with a temp DATA_DIR, tenants with
 * a location key and a check, runs and results made through the real dispatcher and agent API,
 * files of random bytes written by streaming, and a TCP relay that can cut a connection after N
 * bytes (to interrupt an upload mid-way).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildService, type Service } from '../../src/service/app.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import type { PrivateLocation, StoredCheck } from '../../src/service/store/store.ts';
import { type ArtifactKind, artifactPath } from '../../src/shared/artifacts.ts';
import type { CheckType } from '../../src/shared/checks/types.ts';
import { AGENT_PATHS, type RunResult } from '../../src/shared/protocol.ts';
import { passingRunResult } from '../support/results-run-result.ts';
import { createTenant } from './dispatch-harness.ts';

export interface ArtifactTenant {
  accountId: string;
  headers: Record<string, string>;
  location: PrivateLocation;
  key: string;
  check: StoredCheck;
}

export interface ArtifactServiceHarness {
  service: Service;
  url: string;
  dataDir: string;
  /** An account with a location, its key and a check of `checkType` (API by default). */
  tenant(name?: string, checkType?: CheckType): Promise<ArtifactTenant>;
  /** A run of the tenant's check at its location (queued; uploads only need it to exist). */
  run(t: ArtifactTenant): Promise<string>;
  /** Stores a result for the run through the agent API (`fields` replace the defaults); resolves to the result id. */
  submitResult(
    t: ArtifactTenant,
    runId: string,
    details?: Record<string, unknown>,
    verdict?: { hasFailures: boolean },
    fields?: Partial<RunResult>,
  ): Promise<string>;
  /** Uploads a whole artifact of the run with one PUT, as the agent's uploader does; throws unless it completed. */
  upload(
    t: ArtifactTenant,
    runId: string,
    artifact: { name: string; kind: ArtifactKind; contentType: string; bytes: Buffer },
  ): Promise<void>;
  /** Stops the service (an outage); restart() brings it back on the same port and DATA_DIR. */
  stop(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startArtifactService(env: Record<string, string> = {}): Promise<ArtifactServiceHarness> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'outpost-artifacts-'));
  let port = '0';
  let running = true;
  const boot = async () => {
    const service = await buildService(
      loadServiceConfig({
        DATA_DIR: dataDir,
        PORT: port,
        HOST: '127.0.0.1',
        PUBLIC_URL: 'http://127.0.0.1:1/',
        ...env,
      }),
      { logger: false },
    );
    const url = await service.start();
    port = new URL(url).port;
    return { service, url };
  };
  let current = await boot();
  let tenants = 0;
  const h: ArtifactServiceHarness = {
    get service() {
      return current.service;
    },
    get url() {
      return current.url;
    },
    dataDir,
    async tenant(name = 'Acme', checkType: CheckType = 'API') {
      tenants += 1;
      const store = current.service.store;
      const tenant = await createTenant(store, name, tenants);
      // Not activated: the scheduler leaves it alone, the test makes its runs.
      const check = await store.checks.create({
        accountId: tenant.accountId,
        checkType,
        name: 'Login flow',
        activated: false,
        muted: false,
        frequency: 10,
        frequencyOffset: null,
        locationIds: [tenant.location.id],
        body: { name: 'Login flow', request: { method: 'GET', url: 'http://127.0.0.1:9/' } },
      });
      return { ...tenant, check };
    },
    async run(t) {
      return (await current.service.dispatcher.enqueue(t.check, t.location.id, Date.now())).runId;
    },
    async submitResult(t, runId, details = {}, verdict = { hasFailures: false }, fields = {}) {
      const result = passingRunResult({
        runId,
        checkId: t.check.id,
        // tenant() only makes checks of a type an agent runs.
        checkType: t.check.checkType as CheckType,
        hasFailures: verdict.hasFailures,
        details,
        agent: { id: 'test', version: '0.0.0' },
        ...fields,
      });
      const res = await fetch(`${current.url}${AGENT_PATHS.results}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ agentId: randomUUID(), leaseId: 'none', result }),
      });
      if (res.status !== 200) throw new Error(`result upload failed: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { resultId: string }).resultId;
    },
    async upload(t, runId, { name, kind, contentType, bytes }) {
      const res = await fetch(`${current.url}${artifactPath(runId, name)}`, {
        method: 'PUT',
        headers: {
          authorization: `Bearer ${t.key}`,
          'content-type': contentType,
          'upload-length': String(bytes.length),
          'x-artifact-kind': kind,
          'x-artifact-sha256': createHash('sha256').update(bytes).digest('hex'),
        },
        body: new Uint8Array(bytes),
      });
      const status = (await res.json()) as { complete?: boolean };
      if (!res.ok || !status.complete)
        throw new Error(`artifact upload of ${name} failed: ${res.status} ${JSON.stringify(status)}`);
    },
    async stop() {
      if (!running) return;
      running = false;
      // An outage: connections die with the service (and a client's idle keep-alive socket, which
      // Fastify's close would otherwise wait on now and then, cannot hold the stop up).
      const stopping = current.service.stop();
      current.service.app.server.closeAllConnections();
      await stopping;
    },
    async restart() {
      if (running) await h.stop();
      current = await boot();
      running = true;
    },
    async close() {
      await h.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return h;
}

/** Writes `bytes` random bytes to a file in chunks (never the whole file in memory); resolves to its SHA-256. */
export async function writeRandomFile(file: string, bytes: number): Promise<string> {
  const hash = createHash('sha256');
  const out = createWriteStream(file);
  // One random block repeated with a changing prefix: random enough that no layer can compress or
  // deduplicate it, and far cheaper than generating 150 MB of fresh randomness.
  const block = randomBytes(1024 * 1024);
  let written = 0;
  let n = 0;
  while (written < bytes) {
    const chunk = Buffer.from(block.subarray(0, Math.min(block.length, bytes - written)));
    chunk.writeUInt32BE(n++, 0);
    hash.update(chunk);
    written += chunk.length;
    if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return hash.digest('hex');
}

/**
 * A TCP relay on 127.0.0.1 to `targetPort`. The first connection that carries more than
 * `cutAfterBytes` client-to-server bytes is destroyed on both sides right there (once); every
 * other connection passes through. `clientBytes` counts every byte forwarded to the service.
 */
export async function startRelay(targetPort: number, cutAfterBytes: number) {
  const state = { clientBytes: 0, cuts: 0, connections: 0 };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    state.connections += 1;
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    let forwarded = 0;
    const cutThis = state.cuts === 0;
    client.on('data', (chunk: Buffer) => {
      if (cutThis && state.cuts === 0 && forwarded + chunk.length > cutAfterBytes) {
        const part = chunk.subarray(0, cutAfterBytes - forwarded);
        forwarded += part.length;
        state.clientBytes += part.length;
        state.cuts += 1;
        upstream.end(part, () => {
          upstream.destroy();
        });
        client.destroy();
        return;
      }
      forwarded += chunk.length;
      state.clientBytes += chunk.length;
      if (!upstream.write(chunk)) {
        client.pause();
        upstream.once('drain', () => client.resume());
      }
    });
    client.on('end', () => upstream.end());
    upstream.on('data', (chunk: Buffer) => {
      if (!client.destroyed) client.write(chunk);
    });
    upstream.on('end', () => client.end());
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
