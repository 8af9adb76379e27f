/** `outpost serve`: the service until SIGTERM/SIGINT, then a clean stop (held lease requests answered first). */
import { once } from 'node:events';
import { EXIT } from '../shared/errors.ts';
import type { Env } from '../shared/env.ts';
import { buildService } from '../service/app.ts';
import { loadServiceConfig } from '../service/config.ts';

export async function runServe(env: Env): Promise<number> {
  const config = loadServiceConfig(env);
  const service = await buildService(config);
  const address = await service.start();
  service.app.log.info({ address, dataDir: config.dataDir, publicUrl: config.publicUrl.href }, 'outpost service listening');
  const signal = await Promise.race([once(process, 'SIGTERM'), once(process, 'SIGINT')]);
  service.app.log.info({ signal }, 'shutting down');
  await service.stop();
  return EXIT.ok;
}
