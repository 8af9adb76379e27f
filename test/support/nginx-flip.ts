/**
 * Debian's nginx as a check target whose answer a test flips: `GET /flip/<name>` answers 200 "ok",
 * or 500 while the file `fail-<name>` exists in nginx's root, which `setFailing` creates or removes.
 * nginx tests the file on every request (no open_file_cache), so a flip applies to the next run.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startNginx } from '../agent/tcp-servers.ts';

export interface FlipTarget {
  /** The URL of target `name` (lower-case letters, digits and dashes). */
  url(name: string): string;
  setFailing(name: string, failing: boolean): void;
  stop(): Promise<void>;
}

const flipLocations = (dir: string) => `
    root ${dir}/state;
    default_type text/plain;
    location ~ ^/flip/(?<target>[a-z0-9-]+)$ {
      if (-f $document_root/fail-$target) { return 500 "failing\\n"; }
      return 200 "ok\\n";
    }`;

export async function startFlipTarget(): Promise<FlipTarget> {
  const nginx = await startNginx(flipLocations);
  mkdirSync(path.join(nginx.dir, 'state'));
  const stateFile = (name: string) => {
    if (!/^[a-z0-9-]+$/.test(name))
      throw new Error(`flip target name ${JSON.stringify(name)}: use lower-case letters, digits and dashes`);
    return path.join(nginx.dir, 'state', `fail-${name}`);
  };
  return {
    url: (name) => `http://127.0.0.1:${nginx.port}/flip/${name}`,
    setFailing(name, failing) {
      if (failing) writeFileSync(stateFile(name), '');
      else rmSync(stateFile(name), { force: true });
    },
    stop: () => nginx.stop(),
  };
}

/** An API check at `locations` against flip target `target`, with its own alert settings (threshold 1 unless given). */
export function apiCheck(
  name: string,
  target: FlipTarget,
  locations: string[],
  alertSettings: Record<string, unknown> = {},
  tags: string[] = [],
) {
  return {
    name,
    frequency: 0,
    frequencyOffset: 10,
    doubleCheck: false,
    retryStrategy: null,
    privateLocations: locations,
    tags,
    useGlobalAlertSettings: false,
    alertSettings: {
      escalationType: 'RUN_BASED',
      runBasedEscalation: { failedRunThreshold: 1 },
      reminders: { amount: 0, interval: 5 },
      ...alertSettings,
    },
    request: {
      method: 'GET',
      url: target.url(name),
      assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200' }],
    },
  };
}
