/**
 * The store's SQL text with its parameters numbered: `?` (positional) and `$name` (named) become
 * `$1`, `$2`, … for PostgreSQL and `?1`, `?2`, … for SQLite, outside string literals, quoted
 * identifiers and comments. A name used twice is one parameter.
 *
 * SQLite takes `$name` itself, but node:sqlite binds an object by looking each key up among the
 * statement's parameters, which cost as much again as the statement's own work in a 15-column
 * INSERT (BENCHMARKS.md "Parameters bound by position"); numbered, its values bind by position.
 */
import type { SqlParams, SqlValue } from './database.ts';

export interface CompiledSql {
  text: string;
  /** Named parameters in number order; null when the text uses `?`. */
  names: string[] | null;
}

type Style = 'postgres' | 'sqlite';

const compiled = new Map<string, CompiledSql>();

export function compileForPostgres(sql: string): CompiledSql {
  let hit = compiled.get(sql);
  if (!hit) {
    hit = compile(sql, 'postgres');
    compiled.set(sql, hit);
  }
  return hit;
}

/**
 * The text with numbered parameters for SQLite, or null when it names them only in a way this does
 * not rewrite (`:name`, `@name`, or `$name` mixed with `?`): node:sqlite then binds it as it is.
 * Not cached here: SqliteDatabase compiles a text once, when it prepares it.
 */
export function compileForSqlite(sql: string): CompiledSql | null {
  try {
    return compile(sql, 'sqlite');
  } catch {
    return null;
  }
}

/**
 * The values for a compiled text, in number order. A name without a value is refused, unless
 * `absentAsNull` and the key is absent altogether: node:sqlite binds an object's missing names as
 * NULL, and the SQLite backend keeps that.
 */
export function valuesFor(sql: CompiledSql, params: SqlParams | undefined, absentAsNull = false): SqlValue[] {
  if (params === undefined) return [];
  if (Array.isArray(params)) return params as SqlValue[];
  const named = params as Readonly<Record<string, SqlValue>>;
  return (sql.names ?? []).map((name) => {
    const value = named[name];
    if (value !== undefined) return value;
    if (absentAsNull && !(name in named)) return null;
    throw new Error(`SQL parameter $${name} has no value`);
  });
}

function compile(sql: string, style: Style): CompiledSql {
  const mark = style === 'postgres' ? '$' : '?';
  const names: string[] = [];
  let positional = 0;
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const skipped = skipQuotedOrComment(sql, i);
    if (skipped > i) {
      out += sql.slice(i, skipped);
      i = skipped;
      continue;
    }
    const ch = sql[i];
    const name = ch === '$' ? /^[A-Za-z_]\w*/.exec(sql.slice(i + 1))?.[0] : undefined;
    if ((ch === ':' || ch === '@') && style === 'sqlite' && /^[A-Za-z_]/.test(sql[i + 1] ?? ''))
      throw new Error(`SQL names a parameter with ${ch}: ${sql}`);
    if (ch === '?') {
      out += `${mark}${++positional}`;
      i += 1;
    } else if (name) {
      const index = names.includes(name) ? names.indexOf(name) : names.push(name) - 1;
      out += `${mark}${index + 1}`;
      i += name.length + 1;
    } else {
      out += ch;
      i += 1;
    }
  }
  if (positional > 0 && names.length > 0) throw new Error(`SQL mixes ? and $name parameters: ${sql}`);
  return { text: out, names: positional > 0 ? null : names };
}

/** The index after a '…' literal, "…" identifier or -- comment starting at i; i when none starts there. */
function skipQuotedOrComment(sql: string, i: number): number {
  const ch = sql[i];
  if (ch === "'" || ch === '"') {
    let j = i + 1;
    while (j < sql.length && !(sql[j] === ch && sql[j + 1] !== ch)) j += sql[j] === ch ? 2 : 1;
    return j + 1;
  }
  if (ch === '-' && sql[i + 1] === '-') {
    const end = sql.indexOf('\n', i);
    return end === -1 ? sql.length : end;
  }
  return i;
}
