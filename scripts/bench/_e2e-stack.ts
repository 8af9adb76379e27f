/**
 * What the end-to-end benchmarks (e2e, overload) measure: the compiled service with a fresh account,
 * a target that answers every request 200 with a small JSON body, and agents of that service started
 * with the image's allocator settings. Built on the e2e tests' harness. Both log at INFO, the level an
 * operator runs with: a log line per run is part of the real cost.
 */
import type { Api, Proc } from '../../test/e2e/harness.ts';
import { agentEnv, BENCH_SERVICE_ENV, buildDist } from './_dist.ts';

export interface E2eStack {
  /** The CLI the service and agents run: dist/cli/main.js. */
  cli: string;
  dataDir: string;
  service: { proc: Proc; url: string };
  api: Api;
  target: { url: string };
  /** An agent of the location whose key is `locationKey`, spooling under the data dir. */
  startAgent(locationKey: string, nodeFlags: string[]): Proc;
  /** Stops `agent`, the service and the target, then removes the data dir. */
  stop(agent: Proc): Promise<void>;
}

/** `name` names the data dir; `serviceEnv` and `serviceNodeFlags` add to the service's start. */
export async function startE2eStack(
  name: string,
  serviceEnv: Record<string, string> = {},
  serviceNodeFlags: string[] = [],
): Promise<E2eStack> {
  // The agent and service run compiled (dist/), as in the Docker image (_dist.ts says why). The
  // harness reads OUTPOST_CLI when it is loaded, so it is imported only after it is set.
  const cli = `${buildDist()}cli/main.js`;
  process.env.OUTPOST_CLI = cli;
  const harness = await import('../../test/e2e/harness.ts');
  const data = await harness.tempDir(`bench-${name}`);
  const target = await harness.startTarget((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'),
  );
  const service = await harness.startService(
    { ...BENCH_SERVICE_ENV, DATA_DIR: data.dir, LOG_LEVEL: 'INFO', ...serviceEnv },
    serviceNodeFlags,
  );
  const api = new harness.Api(service.url, await harness.createAccount(data.dir));
  return {
    cli,
    dataDir: data.dir,
    service,
    api,
    target,
    startAgent: (locationKey, nodeFlags) =>
      harness.startAgent(
        {
          ...agentEnv(),
          API_KEY: locationKey,
          API_URL: service.url,
          LOG_LEVEL: 'INFO',
          SPOOL_DIR: `${data.dir}/spool`,
        },
        nodeFlags,
      ),
    async stop(agent) {
      await agent.stop();
      await service.proc.stop();
      await target.close();
      await data.remove();
    },
  };
}
