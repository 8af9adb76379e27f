/**
 * A version number per account that moves whenever anything a status page shows changes: its pages,
 * services, incidents, their services and updates. Rendered status pages are cached under it
 * (web/status-pages/page.ts), so a reader sees a change at once on every replica, at the cost of one
 * primary-key read per request. Triggers keep it, so no writer (today's repositories or a later one)
 * can forget to.
 */
import type { Migration, MigrationDb } from './index.ts';

const BUMP = 'INSERT INTO status_page_versions (account_id, version) VALUES';
const ON_CONFLICT = 'ON CONFLICT (account_id) DO UPDATE SET version = version + 1';
const OPERATIONS = [
  ['INSERT', 'NEW'],
  ['UPDATE', 'NEW'],
  ['DELETE', 'OLD'],
] as const;

/** Tables that carry account_id themselves. */
function ownTableTriggers(table: string): string {
  return OPERATIONS.map(
    ([op, row]) => `CREATE TRIGGER ${table}_${op.toLowerCase()}_version AFTER ${op} ON ${table} BEGIN
      ${BUMP} (${row}.account_id, 1) ${ON_CONFLICT};
    END;`,
  ).join('\n');
}

/** Tables that hang off an incident (its services, its updates): the account is the incident's. */
function incidentChildTriggers(table: string): string {
  return OPERATIONS.map(
    ([op, row]) => `CREATE TRIGGER ${table}_${op.toLowerCase()}_version AFTER ${op} ON ${table} BEGIN
      ${BUMP.replace(' VALUES', '')} SELECT account_id, 1 FROM incidents WHERE id = ${row}.incident_id AND true ${ON_CONFLICT};
    END;`,
  ).join('\n');
}

export const migration021: Migration = {
  version: 21,
  name: 'status-page-versions',
  async up(db: MigrationDb) {
    await db.ddl(`
      CREATE TABLE status_page_versions (
        account_id TEXT PRIMARY KEY,
        version    INTEGER NOT NULL
      ) STRICT;
    `);
    if (db.dialect === 'postgres') return postgresTriggers(db);
    await db.ddl(`
      ${['status_pages', 'sp_services', 'incidents'].map(ownTableTriggers).join('\n')}
      ${['incident_services', 'incident_updates'].map(incidentChildTriggers).join('\n')}
    `);
  },
};

/** The same triggers on PostgreSQL, whose trigger bodies are functions: one per kind of table. */
async function postgresTriggers(db: MigrationDb): Promise<void> {
  const upsert = 'ON CONFLICT (account_id) DO UPDATE SET version = status_page_versions.version + 1';
  const onEveryChange = (table: string, fn: string) =>
    `CREATE TRIGGER ${table}_version AFTER INSERT OR UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION ${fn}();`;
  await db.ddl(`
    CREATE FUNCTION status_page_version_own() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        INSERT INTO status_page_versions (account_id, version) VALUES (OLD.account_id, 1) ${upsert};
      ELSE
        INSERT INTO status_page_versions (account_id, version) VALUES (NEW.account_id, 1) ${upsert};
      END IF;
      RETURN NULL;
    END $fn$;
    CREATE FUNCTION status_page_version_incident_child() RETURNS trigger LANGUAGE plpgsql AS $fn$
    DECLARE parent TEXT := CASE WHEN TG_OP = 'DELETE' THEN OLD.incident_id ELSE NEW.incident_id END;
    BEGIN
      INSERT INTO status_page_versions (account_id, version) SELECT account_id, 1 FROM incidents WHERE id = parent ${upsert};
      RETURN NULL;
    END $fn$;
    ${['status_pages', 'sp_services', 'incidents'].map((t) => onEveryChange(t, 'status_page_version_own')).join('\n')}
    ${['incident_services', 'incident_updates'].map((t) => onEveryChange(t, 'status_page_version_incident_child')).join('\n')}
  `);
}
