/** Agents as they registered: which location, which check types they run, when they were last seen. */
import type { CheckType } from '../../../shared/checks/types.ts';
import type { AgentRegistration, AgentRepo } from '../dispatch-types.ts';
import type { SqlDatabase } from '../sql/database.ts';
import type { Agent } from '../store.ts';

interface AgentRow {
  id: string;
  location_id: string;
  version: string;
  hostname: string;
  check_types: string;
  runtimes: string;
  registered_at: string;
  last_seen_at: string;
  gone_at: string | null;
}

const toAgent = (row: AgentRow): Agent => ({
  id: row.id,
  locationId: row.location_id,
  version: row.version,
  hostname: row.hostname,
  checkTypes: JSON.parse(row.check_types) as CheckType[],
  runtimes: JSON.parse(row.runtimes) as string[],
  registeredAt: row.registered_at,
  lastSeenAt: row.last_seen_at,
  goneAt: row.gone_at,
});

// registered_at is kept across re-registrations: it says since when this process has been known.
const UPSERT = `
  INSERT INTO agents (id, location_id, version, hostname, check_types, runtimes, registered_at, last_seen_at, gone_at)
  VALUES ($id, $locationId, $version, $hostname, $checkTypes, $runtimes, $now, $now, NULL)
  ON CONFLICT (id) DO UPDATE SET
    location_id = excluded.location_id, version = excluded.version, hostname = excluded.hostname,
    check_types = excluded.check_types, runtimes = excluded.runtimes,
    last_seen_at = excluded.last_seen_at, gone_at = NULL
  RETURNING *`;

export class SqlAgentRepo implements AgentRepo {
  readonly #db: SqlDatabase;

  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async upsert(agent: AgentRegistration, now: string): Promise<Agent> {
    const row = await this.#db.get<AgentRow>(UPSERT, {
      id: agent.id,
      locationId: agent.locationId,
      version: agent.version,
      hostname: agent.hostname,
      checkTypes: JSON.stringify(agent.checkTypes),
      runtimes: JSON.stringify(agent.runtimes),
      now,
    });
    return toAgent(row as AgentRow);
  }

  async get(agentId: string): Promise<Agent | undefined> {
    const row = await this.#db.get<AgentRow>('SELECT * FROM agents WHERE id = ?', [agentId]);
    return row && toAgent(row);
  }

  async listByLocation(locationId: string): Promise<Agent[]> {
    return (
      await this.#db.all<AgentRow>('SELECT * FROM agents WHERE location_id = ? ORDER BY last_seen_at DESC', [
        locationId,
      ])
    ).map(toAgent);
  }

  async touch(agentId: string, now: string): Promise<void> {
    await this.#db.run('UPDATE agents SET last_seen_at = $now WHERE id = $id AND last_seen_at < $now', {
      id: agentId,
      now,
    });
  }

  async markGone(agentId: string, now: string): Promise<void> {
    await this.#db.run('UPDATE agents SET gone_at = $now, last_seen_at = $now WHERE id = $id', { id: agentId, now });
  }
}
