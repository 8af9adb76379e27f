/**
 * Tables of the dispatcher: runs (the job queue and its leases), agents, error reports and their
 * report tokens. Indexes are shaped after the hot queries so nothing on the dispatch path scans a
 * table (see src/service/store/repos/runs.ts for the statements they serve).
 *
 * Everything here cascades from the private location: once a location is deleted its queue, agents
 * and error reports have no owner left to read them. Runs have no foreign key to checks on purpose:
 * a deleted check's runs stay readable (cancelled, with a reason) until they are pruned.
 */
import type { Migration, MigrationDb } from './index.ts';

export const migration002: Migration = {
  version: 2,
  name: 'dispatch',
  async up(db: MigrationDb) {
    await db.ddl(`
      CREATE TABLE runs (
        run_id            TEXT PRIMARY KEY,
        account_id        TEXT NOT NULL,
        check_id          TEXT NOT NULL,
        location_id       TEXT NOT NULL REFERENCES private_locations(id) ON DELETE CASCADE,
        check_type        TEXT NOT NULL,
        check_class       TEXT NOT NULL CHECK (check_class IN ('uptime', 'heavy')),
        due_at            TEXT NOT NULL,
        state             TEXT NOT NULL CHECK (state IN ('queued', 'leased', 'completed', 'expired', 'cancelled')),
        lease_id          TEXT,
        agent_id          TEXT,
        lease_expires_at  TEXT,
        lease_attempt     INTEGER NOT NULL DEFAULT 1,
        cancel_requested  INTEGER NOT NULL DEFAULT 0,
        end_reason        TEXT,
        timeout_ms        INTEGER NOT NULL,
        -- The check definition snapshot; NULL once the run is finished (see runs.ts).
        check_json        TEXT,
        created_at        TEXT NOT NULL,
        finished_at       TEXT
      ) STRICT;

      -- Claiming: queued runs of one location and class, oldest due first.
      CREATE INDEX runs_claim ON runs (location_id, check_class, due_at) WHERE state = 'queued';
      -- Queue TTL sweep: the oldest queued runs across all locations.
      CREATE INDEX runs_queued_due ON runs (due_at) WHERE state = 'queued';
      -- Lease expiry sweep.
      CREATE INDEX runs_lease_expiry ON runs (lease_expires_at) WHERE state = 'leased';
      -- Superseding on enqueue and cancelling a check's queued runs. (Its leased runs are found via
      -- runs_lease_expiry: there are only as many as agents have slots.)
      CREATE INDEX runs_queued_by_check ON runs (check_id, location_id) WHERE state = 'queued';
      -- Pruning finished runs.
      CREATE INDEX runs_finished ON runs (finished_at) WHERE finished_at IS NOT NULL;

      CREATE TABLE agents (
        id             TEXT PRIMARY KEY,
        location_id    TEXT NOT NULL REFERENCES private_locations(id) ON DELETE CASCADE,
        version        TEXT NOT NULL,
        hostname       TEXT NOT NULL,
        check_types    TEXT NOT NULL,
        runtimes       TEXT NOT NULL,
        registered_at  TEXT NOT NULL,
        last_seen_at   TEXT NOT NULL,
        gone_at        TEXT
      ) STRICT;
      CREATE INDEX agents_location ON agents (location_id, last_seen_at);

      CREATE TABLE error_reports (
        id           TEXT PRIMARY KEY,
        location_id  TEXT NOT NULL REFERENCES private_locations(id) ON DELETE CASCADE,
        received_at  TEXT NOT NULL,
        event_json   TEXT NOT NULL
      ) STRICT;
      -- Newest first per location: the index carries the rowid, which grows with every insert.
      CREATE INDEX error_reports_location ON error_reports (location_id);

      -- Only a hash of each report token is kept; see docs/protocol.md "Error reports".
      CREATE TABLE error_report_tokens (
        token_hash   TEXT PRIMARY KEY,
        location_id  TEXT NOT NULL REFERENCES private_locations(id) ON DELETE CASCADE,
        created_at   TEXT NOT NULL
      ) STRICT;
      CREATE INDEX error_report_tokens_location ON error_report_tokens (location_id);
    `);
  },
};
