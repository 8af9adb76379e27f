/** The ordered location lists of checks (check_locations) and check groups (check_group_locations). */
import type { SqlDatabase } from '../sql/database.ts';

export type LocationList =
  | { table: 'check_locations'; owner: 'check_id' }
  | { table: 'check_group_locations'; owner: 'group_id' };

/** Stores `locationIds` as the list of a new owner, each at its position. */
export async function insertLocationList(
  db: SqlDatabase,
  { table, owner }: LocationList,
  ownerId: string | number,
  locationIds: readonly string[],
): Promise<void> {
  // A Set: listing a location twice would otherwise break the primary key.
  for (const [position, locationId] of [...new Set(locationIds)].entries()) {
    await db.run(`INSERT INTO ${table} (${owner}, location_id, position) VALUES (?, ?, ?)`, [
      ownerId,
      locationId,
      position,
    ]);
  }
}

/** Replaces the owner's list with `locationIds` (inside the caller's transaction). */
export async function replaceLocationList(
  db: SqlDatabase,
  list: LocationList,
  ownerId: string | number,
  locationIds: readonly string[],
): Promise<void> {
  await db.run(`DELETE FROM ${list.table} WHERE ${list.owner} = ?`, [ownerId]);
  await insertLocationList(db, list, ownerId, locationIds);
}
