/**
 * Account environment variables, every value sealed (see migration 007), and the secrets
 * key marker that tells at start whether the configured key opens what the database holds.
 */
import type { DatabaseSync } from 'node:sqlite';
import { ConfigError } from '../../../shared/errors.ts';
import { type SecretBox, SecretDecryptError } from '../../secrets/box.ts';
import type { SecretsKeySource } from '../../secrets/key.ts';
import { nowIso, type SqlDatabase, type SqlExecutor } from '../sql/database.ts';
import type { AccountVariable, AccountVariableInput, VariableRepo } from '../variables-types.ts';

interface VariableRow {
  key: string;
  sealed_value: string;
  locked: number;
  secret: number;
  created_at: string;
  updated_at: string | null;
}

export class SqlVariableRepo implements VariableRepo {
  readonly #db: SqlDatabase;
  readonly #box: SecretBox;
  constructor(db: SqlDatabase, box: SecretBox) {
    this.#db = db;
    this.#box = box;
  }

  #toVariable(row: VariableRow): AccountVariable {
    return {
      key: row.key,
      value: this.#box.open(row.sealed_value),
      locked: row.locked === 1,
      secret: row.secret === 1,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  async list(accountId: string, opts?: { limit: number; page: number }): Promise<AccountVariable[]> {
    const oldestFirst = 'SELECT * FROM environment_variables WHERE account_id = ? ORDER BY created_at, key';
    const rows = opts
      ? await this.#db.all<VariableRow>(`${oldestFirst} LIMIT ? OFFSET ?`, [
          accountId,
          opts.limit,
          (opts.page - 1) * opts.limit,
        ])
      : await this.#db.all<VariableRow>(oldestFirst, [accountId]);
    return rows.map((r) => this.#toVariable(r));
  }

  async get(accountId: string, key: string): Promise<AccountVariable | undefined> {
    const row = await this.#db.get<VariableRow>(
      'SELECT * FROM environment_variables WHERE account_id = ? AND key = ?',
      [accountId, key],
    );
    return row ? this.#toVariable(row) : undefined;
  }

  async create(accountId: string, input: AccountVariableInput): Promise<AccountVariable | undefined> {
    const row = await this.#db.get<VariableRow>(
      `INSERT INTO environment_variables (account_id, key, sealed_value, locked, secret, created_at)
       VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING *`,
      [accountId, input.key, this.#box.seal(input.value), input.locked ? 1 : 0, input.secret ? 1 : 0, nowIso()],
    );
    return row ? this.#toVariable(row) : undefined;
  }

  async update(
    accountId: string,
    key: string,
    input: Omit<AccountVariableInput, 'key'>,
  ): Promise<AccountVariable | undefined> {
    const row = await this.#db.get<VariableRow>(
      `UPDATE environment_variables SET sealed_value = ?, locked = ?, secret = ?, updated_at = ?
       WHERE account_id = ? AND key = ? RETURNING *`,
      [this.#box.seal(input.value), input.locked ? 1 : 0, input.secret ? 1 : 0, nowIso(), accountId, key],
    );
    return row ? this.#toVariable(row) : undefined;
  }

  async delete(accountId: string, key: string): Promise<boolean> {
    return (
      (await this.#db.run('DELETE FROM environment_variables WHERE account_id = ? AND key = ?', [accountId, key]))
        .changes > 0
    );
  }
}

const MARKER_PLAINTEXT = 'outpost secrets key marker v1';

/**
 * Called once when the key is first loaded. A database without a marker gets one sealed with this
 * key; a database with one must open it with this key, else nothing sealed in it can be read and the
 * service must not start (it would fail every read of a secret, and sealing new values with another
 * key would leave the database with two keys). `keySource` names where the key came from.
 */
export function verifySecretsMarker(db: DatabaseSync, box: SecretBox, keySource: SecretsKeySource): void {
  const read = () => db.prepare(MARKER_READ).get() as MarkerRow | undefined;
  let row = read();
  if (!row) {
    db.prepare(MARKER_INSERT).run(...markerValues(box));
    row = read();
  }
  checkMarker(storedMarker(row), box, keySource);
}

/** verifySecretsMarker for a database reached asynchronously (PostgreSQL, where the key loads at open). */
export async function verifySecretsMarkerOn(
  sql: SqlExecutor,
  box: SecretBox,
  keySource: SecretsKeySource,
): Promise<void> {
  const read = () => sql.get<MarkerRow>(MARKER_READ);
  let row = await read();
  if (!row) {
    await sql.run(MARKER_INSERT, markerValues(box));
    row = await read();
  }
  checkMarker(storedMarker(row), box, keySource);
}

interface MarkerRow {
  key_id: string;
  sealed: string;
}

const MARKER_READ = 'SELECT key_id, sealed FROM secrets_marker WHERE id = 1';
// Another process or replica may win the insert with its own key: both verifiers read back what is stored.
const MARKER_INSERT =
  'INSERT INTO secrets_marker (id, key_id, sealed, created_at) VALUES (1, ?, ?, ?) ON CONFLICT DO NOTHING';
const markerValues = (box: SecretBox): [string, string, string] => [box.keyId, box.seal(MARKER_PLAINTEXT), nowIso()];

function storedMarker(row: MarkerRow | undefined): MarkerRow {
  if (!row) throw new Error('the secrets marker was inserted and cannot be read back');
  return row;
}

function checkMarker(row: MarkerRow, box: SecretBox, keySource: SecretsKeySource): void {
  try {
    if (box.open(row.sealed) === MARKER_PLAINTEXT) return;
  } catch (err) {
    if (!(err instanceof SecretDecryptError)) throw err;
  }
  throw new ConfigError(
    keySource.setting,
    `the secrets key from ${keySource.description} (key id ${box.keyId}) cannot decrypt the secrets stored in this database ` +
      `(sealed with key id ${row.key_id}); configure the key that sealed them (SECRETS_KEY or SECRETS_KEY_FILE)`,
  );
}
