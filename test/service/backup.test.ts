/**
 * `outpost backup FILE` against a live service: a real `outpost serve` process stores results that an
 * agent (the agent's own ServiceClient) submits without pause, the real CLI takes the backup while
 * they keep coming, and the backup, restored as docs/operations.md says, holds every result the
 * service had acknowledged before the backup started.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/agent/client.ts';
import { DEFAULT_KEY_FILE_NAME } from '../../src/service/secrets/key.ts';
import { DB_FILE } from '../../src/service/store/sqlite/db.ts';
import { Api, createAccount, Proc, startService, tempDir } from '../e2e/harness.ts';
import { registrationBody, resultFor } from '../helpers/dispatch-harness.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/outpost');

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

async function backupCli(args: string[], env: Record<string, string>): Promise<CliRun> {
  try {
    const { stdout, stderr } = await promisify(execFile)(BIN, ['backup', ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

interface Ack {
  checkId: string;
  resultId: string;
}

/**
 * The write load: each round creates a check through the public API (a new check is due at once),
 * leases its run over the agent API and submits the result. Every result the service acknowledged
 * is in `acks`, in order; `stop()` ends the loop after the round under way.
 */
function writeLoad(api: Api, agent: ServiceClient, agentId: string) {
  const acks: Ack[] = [];
  const reached: Array<{ count: number; resolve: () => void }> = [];
  let stopping = false;
  const round = async (n: number) => {
    await api.createApiCheck({
      name: `load ${n}`,
      frequency: 1440,
      privateLocations: ['backup-loc'],
      request: { method: 'GET', url: 'http://127.0.0.1:9/' },
    });
    const { jobs } = await agent.lease({ agentId, slots: { uptime: 10, heavy: 0 }, waitSeconds: 10 });
    for (const job of jobs) {
      const { resultId } = await agent.submitResult({ agentId, leaseId: job.leaseId, result: resultFor(job, agentId) });
      acks.push({ checkId: job.check.id, resultId });
    }
    for (const waiter of reached.filter((w) => acks.length >= w.count)) waiter.resolve();
  };
  const done = (async () => {
    for (let n = 0; !stopping; n++) await round(n);
  })();
  return {
    acks,
    /** Resolves once at least `count` results were acknowledged; rejects if the load failed first. */
    reach: (count: number) =>
      Promise.race([
        new Promise<void>((resolve) => reached.push({ count, resolve })),
        done.then(() => {
          throw new Error(`the write load ended after ${acks.length} results, before ${count}`);
        }),
      ]),
    stop: () => {
      stopping = true;
      return done;
    },
  };
}

describe('outpost backup', () => {
  let data: Awaited<ReturnType<typeof tempDir>>;
  let service: Awaited<ReturnType<typeof startService>>;
  let api: Api;
  let agent: ServiceClient;
  let agentId: string;

  beforeAll(async () => {
    data = await tempDir('backup');
    service = await startService({ DATA_DIR: path.join(data.dir, 'live') });
    api = new Api(service.url, await createAccount(path.join(data.dir, 'live')));
    const location = await api.createLocation('backup-loc');
    agent = new ServiceClient({ apiUrl: new URL(service.url), apiKey: location.key });
    agentId = crypto.randomUUID();
    await agent.register(registrationBody(agentId));
  });

  afterAll(async () => {
    await agent?.close();
    await service?.proc.stop();
    await data?.remove();
  });

  it('copies a live database under write load: the restored copy has every result acknowledged before it began', async () => {
    const liveDir = path.join(data.dir, 'live');
    const file = path.join(data.dir, 'outpost-backup.db');
    const load = writeLoad(api, agent, agentId);
    await load.reach(10);
    // A reader that stays in its transaction (as a slow API read may) keeps every later commit in the
    // WAL, not yet in outpost.db: a copy of the file alone would miss the next results.
    const reader = new DatabaseSync(path.join(liveDir, DB_FILE), { readOnly: true });
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM runs').get();
    await load.reach(20);
    const before = [...load.acks];
    const run = await backupCli([file], { DATA_DIR: liveDir });
    const duringBackup = load.acks.length - before.length;
    await load.stop();
    reader.exec('COMMIT');
    reader.close();

    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ file, bytes: readFileSync(file).length });
    // The key is not in the backup, and the note says where it is.
    expect(run.stderr).toContain(path.join(liveDir, DEFAULT_KEY_FILE_NAME));
    // The service kept storing results while the backup ran.
    expect(duringBackup).toBeGreaterThan(0);

    const copy = new DatabaseSync(file, { readOnly: true });
    expect(copy.prepare('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }]);
    copy.close();

    // The restore of docs/operations.md: the file as DATA_DIR/outpost.db, then the key kept apart.
    const restoredDir = path.join(data.dir, 'restored');
    mkdirSync(restoredDir);
    copyFileSync(file, path.join(restoredDir, DB_FILE));
    // Without its key the restored database does not start: the marker sealed with the key says so.
    const keyless = new Proc(['serve'], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: restoredDir });
    expect(await keyless.exited).toBe(2);
    expect(keyless.stderr.join('\n')).toMatch(
      /the key file .*outpost-secrets\.key .*cannot decrypt the secrets stored in this database/,
    );
    // (That start generated a key file of its own: the restored key replaces it.)
    copyFileSync(path.join(liveDir, DEFAULT_KEY_FILE_NAME), path.join(restoredDir, DEFAULT_KEY_FILE_NAME));
    const restored = await startService({ DATA_DIR: restoredDir });
    try {
      const restoredApi = new Api(restored.url, api.auth);
      const missing: Ack[] = [];
      for (const ack of before) {
        const res = await restoredApi.call<{ id: string }>('GET', `/v1/check-results/${ack.checkId}/${ack.resultId}`);
        if (res.status !== 200 || res.body.id !== ack.resultId) missing.push(ack);
      }
      expect(missing).toEqual([]);
    } finally {
      await restored.proc.stop();
    }
    // Two service starts on a busy CI machine.
  }, 120_000);

  it('refuses to overwrite a file unless --force, naming FILE (exit 2)', async () => {
    const liveDir = path.join(data.dir, 'live');
    const file = path.join(data.dir, 'taken.db');
    writeFileSync(file, 'not a backup');
    const refused = await backupCli([file], { DATA_DIR: liveDir });
    expect(refused).toMatchObject({ code: 2, stdout: '' });
    expect(refused.stderr).toMatch(/^outpost: FILE .*already exists.*--force to replace it\n$/);
    expect(readFileSync(file, 'utf8')).toBe('not a backup');

    const forced = await backupCli([file, '--force'], { DATA_DIR: liveDir });
    expect(forced.code, forced.stderr).toBe(0);
    const copy = new DatabaseSync(file, { readOnly: true });
    expect(copy.prepare('SELECT count(*) AS n FROM accounts').get()).toEqual({ n: 1 });
    copy.close();
  });

  const usage: Array<[string, string[], (dir: string) => Record<string, string>, RegExp]> = [
    ['no FILE', [], (dir) => ({ DATA_DIR: path.join(dir, 'live') }), /FILE.*outpost backup FILE/],
    ['two files', ['a.db', 'b.db'], (dir) => ({ DATA_DIR: path.join(dir, 'live') }), /one FILE.*b\.db"/],
    ['an unknown flag', ['--forse', 'a.db'], (dir) => ({ DATA_DIR: path.join(dir, 'live') }), /--forse/],
    [
      'a folder that does not exist',
      ['no/such/folder/a.db'],
      (dir) => ({ DATA_DIR: path.join(dir, 'live') }),
      /FILE .*no\/such\/folder.*does not exist/,
    ],
    [
      'the live database itself',
      ['live/outpost.db', '--force'],
      (dir) => ({ DATA_DIR: path.join(dir, 'live') }),
      /FILE .*live database/,
    ],
    [
      'a PostgreSQL DATABASE_URL',
      ['a.db'],
      (dir) => ({ DATA_DIR: path.join(dir, 'live'), DATABASE_URL: 'postgres://outpost@127.0.0.1/outpost' }),
      /DATABASE_URL.*pg_dump/,
    ],
    [
      'a DATA_DIR without a database',
      ['a.db'],
      (dir) => ({ DATA_DIR: path.join(dir, 'empty') }),
      /DATA_DIR=.*empty.*no outpost\.db/,
    ],
  ];
  it.each(usage)('rejects %s with exit 2 and one line naming it', async (_what, args, env, pattern) => {
    const cwd = data.dir;
    const run = await backupCli(
      args.map((a) => (a.startsWith('-') ? a : path.join(cwd, a))),
      env(cwd),
    );
    expect(run).toMatchObject({ code: 2, stdout: '' });
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(pattern);
    expect(existsSync(path.join(cwd, 'empty'))).toBe(false);
  });
});
