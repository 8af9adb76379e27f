/**
 * Opaque `nextId` cursors over a table's `seq` column: the seq of the last row of a page,
 * base64url-encoded with a tag per resource, so clients treat it as opaque and a cursor of one
 * list is refused by another.
 */
import { BadRequestError } from '../../http/errors.ts';

export function encodeSeqCursor(tag: string, seq: number): string {
  return Buffer.from(`${tag}:${seq}`, 'utf8').toString('base64url');
}

export function decodeSeqCursor(tag: string, cursor: string): number {
  const match = /^([a-z]+):(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (match?.[1] !== tag || !match[2]) {
    throw new BadRequestError(
      'querystring/nextId is not a cursor returned by this list; pass the nextId of its previous page',
    );
  }
  return Number(match[2]);
}

/** Cuts a `limit + 1` row fetch to a page and the cursor of the next one (null on the last page). */
export function toPage<R extends { seq: number }, T>(tag: string, rows: R[], limit: number, map: (rows: R[]) => T[]) {
  const pageRows = rows.slice(0, limit);
  const last = pageRows.at(-1);
  return { entries: map(pageRows), nextId: rows.length > limit && last ? encodeSeqCursor(tag, last.seq) : null };
}
