/**
 * Two `outpost serve` replicas on one PostgreSQL database, as the fleet and rolling-restart tests run
 * them: FleetProcs starts replicas and agents and restarts the leader (SIGTERM, its start again, the
 * other leading); awaitLeader and awaitRunsFinal wait for a leader and for every run due before a
 * cutoff to be final.
 */
import type pg from 'pg';
import { expect } from 'vitest';
import { isLeading, leadsAfter, type Proc, type Replica, startAgent, startService, until } from '../e2e/harness.ts';
import type { Disturbance } from '../e2e/run-accounting.ts';

/**
 * The processes of a fleet test: each one started (restarts included) is named in `everyProc`, for the
 * summary of what they warned about, and killed by `cleanups` after the file.
 */
export class FleetProcs {
  readonly everyProc: Array<{ name: string; proc: Proc }> = [];
  readonly #serviceEnv: Record<string, string>;
  readonly #cleanups: Array<() => Promise<unknown>>;

  /** `serviceEnv`: the settings of every replica besides DATA_DIR and PORT. */
  constructor(serviceEnv: Record<string, string>, cleanups: Array<() => Promise<unknown>>) {
    this.#serviceEnv = serviceEnv;
    this.#cleanups = cleanups;
  }

  /** Starts replica `name` on `port` and `dataDir` (again, after a stop: the same ones). */
  async startReplica(name: string, port: number, dataDir: string): Promise<Replica> {
    const { proc } = await startService({ ...this.#serviceEnv, DATA_DIR: dataDir, PORT: String(port) });
    this.#started(`replica ${name}`, proc);
    return { name, port, dataDir, proc };
  }

  /** Starts agent `i` of the location whose key is `apiKey` on `apiUrl`, spooling under `spoolRoot`. */
  startAgent(i: number, apiKey: string, apiUrl: string, spoolRoot: string): Proc {
    const proc = startAgent({
      API_KEY: apiKey,
      API_URL: apiUrl,
      SPOOL_DIR: `${spoolRoot}/spool-${i}`,
      SANDBOX_POOL_SIZE: '0',
      LOG_LEVEL: 'INFO',
    });
    this.#started(`agent ${i}`, proc);
    return proc;
  }

  /**
   * SIGTERM of the leading one of the two `replicas` (it must exit with 0), its start on the same port
   * (replacing it in `replicas`), and the other leading: what it disturbed, and when.
   */
  async restartLeader(replicas: Replica[]): Promise<Disturbance> {
    const index = isLeading(replicas[0]!.proc) ? 0 : 1;
    const stopped = replicas[index]!;
    const other = replicas[1 - index]!;
    const otherLines = other.proc.lines.length;
    const from = Date.now();
    const code = await stopped.proc.stop('SIGTERM');
    // On failure, what ended it: a signal, its last words.
    const ending = {
      replica: stopped.name,
      code,
      signal: stopped.proc.child.signalCode,
      stderr: stopped.proc.stderr.slice(-5),
      last: stopped.proc.lines.slice(-5),
    };
    expect(ending).toMatchObject({ code: 0 });
    replicas[index] = await this.startReplica(stopped.name, stopped.port, stopped.dataDir);
    await leadsAfter(other.proc, otherLines);
    return { from, to: Date.now(), what: `SIGTERM of leader ${stopped.name}` };
  }

  #started(name: string, proc: Proc): void {
    this.everyProc.push({ name, proc });
    this.#cleanups.push(() => proc.stop('SIGKILL'));
  }
}

/** Resolves once one of `replicas` leads (the other keeps trying the lock). */
export async function awaitLeader(replicas: Replica[]): Promise<void> {
  await until(async () => (replicas.some((r) => isLeading(r.proc)) ? true : undefined), { what: 'a replica to lead' });
}

/** Resolves once no run due before `cutoff` is queued or leased. */
export async function awaitRunsFinal(db: pg.Client, cutoff: string, timeoutMs: number): Promise<void> {
  const open = async () =>
    Number(
      (await db.query("SELECT count(*) AS n FROM runs WHERE due_at < $1 AND state IN ('queued', 'leased')", [cutoff]))
        .rows[0].n,
    );
  await until(async () => ((await open()) === 0 ? true : undefined), {
    timeoutMs,
    everyMs: 500,
    what: 'every run due before the cutoff to be final',
  });
}
