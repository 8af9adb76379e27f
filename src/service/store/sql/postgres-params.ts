/**
 * The store's SQL text in PostgreSQL's parameter form: `?` (positional) and `$name` (named) become
 * `$1`, `$2`, …, outside string literals, quoted identifiers and comments. A name used twice is one
 * parameter. Compiled once per text.
 */
import type { SqlParams, SqlValue } from './database.ts';

export interface CompiledSql {
  text: string;
  /** Named parameters in `$n` order; null when the text uses `?`. */
  names: string[] | null;
}

const compiled = new Map<string, CompiledSql>();

export function compileForPostgres(sql: string): CompiledSql {
  let hit = compiled.get(sql);
  if (!hit) {
    hit = compile(sql);
    compiled.set(sql, hit);
  }
  return hit;
}

/** The values for a compiled text, in `$n` order. */
export function valuesFor(sql: CompiledSql, params: SqlParams | undefined): SqlValue[] {
  if (params === undefined) return [];
  if (Array.isArray(params)) return params as SqlValue[];
  const named = params as Readonly<Record<string, SqlValue>>;
  return (sql.names ?? []).map((name) => {
    const value = named[name];
    if (value === undefined) throw new Error(`SQL parameter $${name} has no value`);
    return value;
  });
}

function compile(sql: string): CompiledSql {
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
    if (ch === '?') {
      out += `$${++positional}`;
      i += 1;
    } else if (name) {
      const index = names.includes(name) ? names.indexOf(name) : names.push(name) - 1;
      out += `$${index + 1}`;
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
