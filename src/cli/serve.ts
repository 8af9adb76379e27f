/**
 * `outpost serve`: the service until SIGTERM/SIGINT, then a drain of SHUTDOWN_DRAIN_SECONDS (readiness
 * fails, requests are still served, so a load balancer moves traffic away first) and a clean stop
 * (held lease requests answered first). A second signal ends the drain early.
 */
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { EXIT } from '../shared/errors.ts';
import type { Env } from '../shared/env.ts';
import { buildService, type Service } from '../service/app.ts';
import { loadServiceConfig } from '../service/config.ts';

export async function runServe(env: Env): Promise<number> {
  const config = loadServiceConfig(env);
  const service = await buildService(config);
  const address = await service.start();
  service.app.log.info(
    { address, dataDir: config.dataDir, publicUrl: config.publicUrl.href },
    'outpost service listening',
  );
  const signal = await nextSignal();
  service.app.log.info({ signal }, 'shutting down');
  await drain(service, config.shutdownDrainSeconds ?? 0);
  await service.stop();
  return EXIT.ok;
}

async function nextSignal(abort?: AbortSignal): Promise<NodeJS.Signals> {
  const [signal] = (await Promise.race([
    once(process, 'SIGTERM', { signal: abort }),
    once(process, 'SIGINT', { signal: abort }),
  ])) as [NodeJS.Signals];
  return signal;
}

async function drain(service: Service, seconds: number): Promise<void> {
  if (seconds === 0) return;
  service.drain();
  service.app.log.info({ seconds }, 'draining: readiness fails, requests are still served');
  const done = new AbortController();
  const ended = await Promise.race([
    delay(seconds * 1000, 'drained' as const, { signal: done.signal }),
    nextSignal(done.signal).then(() => 'interrupted' as const),
  ]).finally(() => done.abort());
  service.app.log.info({ ended }, 'drain over');
}
