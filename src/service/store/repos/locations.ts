import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError } from '../../http/errors.ts';
import type { SqlDatabase } from '../sql/database.ts';
import { isForeignKeyViolation, isUniqueViolation, nowIso } from '../sql/database.ts';
import type { LocationKeyRecord, LocationRepo, PrivateLocation } from '../store.ts';
import { hashKey, newLocationKey } from './keys.ts';
import { type KeyTable, storeKey } from './stored-keys.ts';

/** Two keys let an operator rotate: add the new key, redeploy agents, delete the old one. */
export const MAX_ACTIVE_LOCATION_KEYS = 2;

const KEYS: KeyTable = { table: 'location_keys', owner: 'location_id' };

interface LocationRow {
  id: string;
  account_id: string;
  name: string;
  slug_name: string;
  icon: string;
  proxy_url: string | null;
  created_at: string;
  updated_at: string | null;
}

interface KeyRow {
  id: string;
  location_id: string;
  masked_key: string;
  created_at: string;
  updated_at: string | null;
}

const COLUMNS = 'l.id, l.account_id, l.name, l.slug_name, l.icon, l.proxy_url, l.created_at, l.updated_at';

const toLocation = (row: LocationRow): PrivateLocation => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  slugName: row.slug_name,
  icon: row.icon,
  proxyUrl: row.proxy_url,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toKey = (row: KeyRow): LocationKeyRecord => ({
  id: row.id,
  locationId: row.location_id,
  maskedKey: row.masked_key,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export class SqlLocationRepo implements LocationRepo {
  readonly #db: SqlDatabase;
  constructor(db: SqlDatabase) {
    this.#db = db;
  }

  async create(
    accountId: string,
    input: { name: string; slugName: string; icon: string; proxyUrl: string | null },
  ): Promise<PrivateLocation> {
    const location: PrivateLocation = {
      id: randomUUID(),
      accountId,
      ...input,
      createdAt: nowIso(),
      updatedAt: null,
    };
    try {
      await this.#db.run(
        `INSERT INTO private_locations (id, account_id, name, slug_name, icon, proxy_url, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        [location.id, accountId, input.name, input.slugName, input.icon, input.proxyUrl, location.createdAt],
      );
    } catch (err) {
      // The unique index decides, so two concurrent creates with one slug cannot both succeed.
      if (isUniqueViolation(err)) {
        throw new ConflictError(`A private location with slugName "${input.slugName}" already exists in this account`);
      }
      throw err;
    }
    return location;
  }

  async update(
    accountId: string,
    id: string,
    input: { name: string; icon: string; proxyUrl: string | null },
  ): Promise<PrivateLocation | undefined> {
    const result = await this.#db.run(
      'UPDATE private_locations SET name = ?, icon = ?, proxy_url = ?, updated_at = ? WHERE id = ? AND account_id = ?',
      [input.name, input.icon, input.proxyUrl, nowIso(), id, accountId],
    );
    return result.changes > 0 ? this.get(accountId, id) : undefined;
  }

  async get(accountId: string, id: string): Promise<PrivateLocation | undefined> {
    const row = (await this.#db.get(`SELECT ${COLUMNS} FROM private_locations l WHERE l.id = ? AND l.account_id = ?`, [
      id,
      accountId,
    ])) as LocationRow | undefined;
    return row && toLocation(row);
  }

  async getBySlug(accountId: string, slugName: string): Promise<PrivateLocation | undefined> {
    const row = (await this.#db.get(
      `SELECT ${COLUMNS} FROM private_locations l WHERE l.account_id = ? AND l.slug_name = ?`,
      [accountId, slugName],
    )) as LocationRow | undefined;
    return row && toLocation(row);
  }

  async getById(id: string): Promise<PrivateLocation | undefined> {
    const row = (await this.#db.get(`SELECT ${COLUMNS} FROM private_locations l WHERE l.id = ?`, [id])) as
      | LocationRow
      | undefined;
    return row && toLocation(row);
  }

  async list(accountId: string): Promise<PrivateLocation[]> {
    const rows = (await this.#db.all(
      `SELECT ${COLUMNS} FROM private_locations l WHERE l.account_id = ? ORDER BY l.created_at, l.id`,
      [accountId],
    )) as unknown as LocationRow[];
    return rows.map(toLocation);
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    return this.#db.transaction(async () => {
      const owned = await this.#db.get('SELECT 1 FROM private_locations WHERE id = ? AND account_id = ?', [
        id,
        accountId,
      ]);
      if (!owned) return false;
      const inUse = (await this.#db.get('SELECT COUNT(*) AS n FROM check_locations WHERE location_id = ?', [id])) as {
        n: number;
      };
      if (inUse.n > 0) {
        throw new ConflictError(
          `The private location is used by ${inUse.n} check(s); remove it from their privateLocations first`,
        );
      }
      try {
        return (
          (await this.#db.run('DELETE FROM private_locations WHERE id = ? AND account_id = ?', [id, accountId]))
            .changes > 0
        );
      } catch (err) {
        // Rows of other tables (e.g. the dispatcher's) may still reference the location.
        if (isForeignKeyViolation(err))
          throw new ConflictError('The private location is still referenced and cannot be deleted');
        throw err;
      }
    });
  }

  async createKey(accountId: string, locationId: string): Promise<{ record: LocationKeyRecord; rawKey: string }> {
    // Count and insert in one write transaction, so two concurrent requests cannot both add a
    // second key and end up with three.
    return this.#db.transaction(async () => {
      const owned = await this.#db.get('SELECT 1 FROM private_locations WHERE id = ? AND account_id = ?', [
        locationId,
        accountId,
      ]);
      if (!owned) throw new NotFoundError('Private location not found');
      const { n } = (await this.#db.get('SELECT COUNT(*) AS n FROM location_keys WHERE location_id = ?', [
        locationId,
      ])) as {
        n: number;
      };
      if (n >= MAX_ACTIVE_LOCATION_KEYS) {
        throw new ConflictError(
          `A private location has at most ${MAX_ACTIVE_LOCATION_KEYS} active keys; delete one before creating another`,
        );
      }
      const rawKey = newLocationKey();
      const { id, maskedKey, createdAt } = await storeKey(this.#db, KEYS, locationId, rawKey);
      const record: LocationKeyRecord = { id, locationId, maskedKey, createdAt, updatedAt: null };
      return { record, rawKey };
    });
  }

  async listKeys(locationId: string): Promise<LocationKeyRecord[]> {
    const rows = (await this.#db.all(
      'SELECT id, location_id, masked_key, created_at, updated_at FROM location_keys WHERE location_id = ? ORDER BY created_at, id',
      [locationId],
    )) as unknown as KeyRow[];
    return rows.map(toKey);
  }

  async deleteKey(accountId: string, locationId: string, keyId: string): Promise<boolean> {
    const result = await this.#db.run(
      `DELETE FROM location_keys WHERE id = ? AND location_id = ?
         AND location_id IN (SELECT id FROM private_locations WHERE account_id = ?)`,
      [keyId, locationId, accountId],
    );
    return result.changes > 0;
  }

  async findByKey(rawKey: string): Promise<PrivateLocation | undefined> {
    const row = (await this.#db.get(
      `SELECT ${COLUMNS} FROM location_keys k JOIN private_locations l ON l.id = k.location_id WHERE k.key_hash = ?`,
      [hashKey(rawKey)],
    )) as LocationRow | undefined;
    return row && toLocation(row);
  }
}
