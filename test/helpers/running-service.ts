/**
 * The service as buildService composes it, listening on an ephemeral port on 127.0.0.1, with a
 * fresh DATA_DIR; `env` adds settings as an operator would set them.
 */
import { rmSync } from 'node:fs';
import { buildService, type Service } from '../../src/service/app.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { tempDataDir } from './public-api.ts';

export interface RunningService {
  service: Service;
  baseUrl: string;
  dataDir: string;
  /** Stops the service and removes its data directory. */
  stop(): Promise<void>;
}

export async function startRunningService(env: Record<string, string> = {}): Promise<RunningService> {
  const dataDir = tempDataDir();
  const service = await buildService(loadServiceConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ...env }), {
    logger: false,
  });
  const baseUrl = await service.start();
  return {
    service,
    baseUrl,
    dataDir,
    async stop() {
      await service.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
