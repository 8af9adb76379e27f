/**
 * Fuzzes every operation of the service's own /openapi.json with fast-check: bodies, query and path
 * parameters derived from each operation's schema, then mutated (wrong types, huge, negative and
 * fractional numbers, 1e20, 9007199254740993, long and unicode strings, missing and extra
 * properties, nulls, hostile URLs). A request fails the test when it answers 5xx, takes over 2 s, or
 * answers 4xx after writing to the database (SQLite's data_version, seen from a second connection,
 * moves on any commit by the service's connection).
 *
 * Fixed seed (FUZZ_SEED overrides it) and a bounded number of runs per operation; fast-check's
 * failure message carries the seed and the shrunk request to replay.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/service/accounts.ts';
import { buildService, type Service } from '../../src/service/app.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { DB_FILE } from '../../src/service/store/sqlite/db.ts';
import { tempDataDir } from '../helpers/public-api.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const RUNS_PER_OPERATION = Number(process.env.FUZZ_RUNS ?? 50);
const SLOW_MS = 2000;

type Schema = Record<string, unknown>;
interface Parameter {
  in: 'path' | 'query' | 'header';
  name: string;
  schema?: Schema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}
type Method = 'get' | 'post' | 'put' | 'delete' | 'head' | 'patch';

/**
 * Values that broke stores and parsers before: overflow, precision, sign, fractions, type confusion.
 * 2 ** 53 is what JSON.parse makes of 9007199254740993.
 */
const HOSTILE_NUMBERS = [1e20, -1e20, 2 ** 53, 2 ** 63, -(2 ** 63), -1, 0, 0.5, -0.5, 1e308, Number.MAX_SAFE_INTEGER];
const HOSTILE_STRINGS = [
  '',
  'javascript:alert(1)',
  'file:///etc/passwd',
  'http://[::1',
  '1e20',
  '9007199254740993',
  '-1',
  '0.5',
  'null',
  '../../etc/passwd',
  "' OR 1=1 --",
  '\u0000',
  '\ud800',
  '🦄'.repeat(300),
  'x'.repeat(70_000),
];

function hostileValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constantFrom<unknown>(...HOSTILE_NUMBERS, ...HOSTILE_STRINGS, null, true, [], {}, [null], { a: 1 }),
    fc.integer(),
    fc.double({ noNaN: true }),
    fc.string({ unit: 'binary', maxLength: 40 }),
  );
}

/** fast-check's stringMatching covers most, not all, of RegExp (no lookahead): those get plain strings. */
function patternArbitrary(pattern: string): fc.Arbitrary<string> | undefined {
  try {
    return fc.stringMatching(new RegExp(pattern));
  } catch {
    return undefined;
  }
}

function stringFor(schema: Schema, noisy: boolean): fc.Arbitrary<string> {
  const minLength = Number(schema.minLength ?? 0);
  const maxLength = Math.min(Number(schema.maxLength ?? 40), minLength + 40);
  const plain = fc.string({ minLength, maxLength, unit: 'grapheme' });
  const examples = fc.constantFrom(
    'https://example.com/a?b=1',
    'http://127.0.0.1:1/x',
    'https://{{HOST}}/p',
    'user@example.com',
    'a-slug',
  );
  if (typeof schema.pattern === 'string') {
    const matching = patternArbitrary(schema.pattern);
    const fitting = matching?.filter((s) => s.length >= minLength && s.length <= maxLength);
    if (fitting) return noisy ? fc.oneof(fitting, plain) : fitting;
  }
  return fc.oneof({ weight: 3, arbitrary: plain }, { weight: 1, arbitrary: examples });
}

/** Within the schema's bounds; where it declares none, the extremes it thereby allows are fair game. */
function numberFor(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = typeof schema.minimum === 'number' ? schema.minimum : -1000;
  const max = typeof schema.maximum === 'number' ? schema.maximum : Math.max(min, 0) + 1000;
  const ordinary = integer
    ? fc.integer({ min: Math.ceil(min), max: Math.floor(max) })
    : fc.double({ min, max, noNaN: true });
  const extremes = [
    ...(schema.maximum === undefined ? [1e20, 2 ** 53, 2 ** 63] : []),
    ...(schema.minimum === undefined ? [-1e20, -(2 ** 63)] : []),
  ];
  return extremes.length > 0
    ? fc.oneof({ weight: 3, arbitrary: ordinary }, { weight: 1, arbitrary: fc.constantFrom(...extremes) })
    : ordinary;
}

function objectFor(schema: Schema, depth: number, noisy: boolean): fc.Arbitrary<unknown> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required ?? []) as string[]);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [key, sub] of Object.entries(properties)) model[key] = childValue(sub, depth + 1, noisy);
  // Noisy: sometimes a property short, sometimes with an unknown property.
  const record = fc.record(model, { requiredKeys: Object.keys(properties).filter((k) => required.has(k)) });
  const trimmed = fc.tuple(record, fc.nat()).map(([value, drop]) => {
    const keys = Object.keys(value);
    const key = keys[drop % Math.max(keys.length, 1)];
    if (key !== undefined) delete (value as Record<string, unknown>)[key];
    return value;
  });
  const extra = fc.tuple(record, hostileValue()).map(([value, v]) => ({ ...value, unexpectedProperty: v }));
  if (!noisy) return record;
  return fc.oneof({ weight: 6, arbitrary: record }, { weight: 1, arbitrary: trimmed }, { weight: 1, arbitrary: extra });
}

/** A value valid for `schema` as far as its type, enum, bounds and lengths go. */
function validValue(schema: Schema, depth: number, noisy = false): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const branches = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (branches) return fc.oneof(...branches.map((b) => childValue(b, depth, noisy)));
  if (Array.isArray(schema.type))
    return fc.oneof(...(schema.type as string[]).map((type) => validValue({ ...schema, type }, depth, noisy)));
  switch (schema.type) {
    case 'string':
      return stringFor(schema, noisy);
    case 'integer':
      return numberFor(schema, true);
    case 'number':
      return numberFor(schema, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      if (depth > 4) return fc.constant([]);
      return fc.array(childValue((schema.items ?? {}) as Schema, depth + 1, noisy), {
        minLength: Number(schema.minItems ?? 0),
        maxLength: 3,
      });
    case 'object':
      return depth > 4 ? fc.constant({}) : objectFor(schema, depth, noisy);
    default:
      return hostileValue();
  }
}

/** Noisy: any value may be hostile (several faults at once); otherwise valid throughout. */
function childValue(schema: Schema, depth: number, noisy: boolean): fc.Arbitrary<unknown> {
  if (!noisy) return validValue(schema, depth);
  return fc.oneof({ weight: 6, arbitrary: validValue(schema, depth, true) }, { weight: 1, arbitrary: hostileValue() });
}

/** Every value in a JSON tree, each with a setter that replaces it in place. */
function slotsOf(root: { value: unknown }): Array<(v: unknown) => void> {
  const slots: Array<(v: unknown) => void> = [
    (v) => {
      root.value = v;
    },
  ];
  const walk = (node: unknown) => {
    if (node === null || typeof node !== 'object') return;
    for (const key of Object.keys(node)) {
      const holder = node as Record<string, unknown>;
      slots.push((v) => {
        holder[key] = v;
      });
      walk(holder[key]);
    }
  };
  walk(root.value);
  return slots;
}

/** A valid value with exactly one of its nodes (or itself) replaced by a hostile value. */
function oneFault(schema: Schema): fc.Arbitrary<unknown> {
  return fc.tuple(validValue(schema, 0), fc.nat(), hostileValue()).map(([value, index, hostile]) => {
    const root = { value: structuredClone(value) };
    const slots = slotsOf(root);
    slots[index % slots.length]?.(hostile);
    return root.value;
  });
}

function fuzzValue(schema: Schema): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 4, arbitrary: oneFault(schema) },
    { weight: 2, arbitrary: validValue(schema, 0) },
    { weight: 1, arbitrary: validValue(schema, 0, true) },
  );
}

function queryValue(schema: Schema): fc.Arbitrary<string> {
  const valid = validValue(schema, 0).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  return fc.oneof(
    { weight: 2, arbitrary: valid },
    { weight: 1, arbitrary: hostileValue().map((v) => (typeof v === 'string' ? v : JSON.stringify(v))) },
  );
}

/** A path parameter: an id the service handed out earlier (by index into the pool) or a made-up one. */
const pathValue = fc.oneof(
  { weight: 2, arbitrary: fc.nat().map((i) => ({ fromPool: i })) },
  {
    weight: 1,
    arbitrary: fc
      .oneof(
        fc.constantFrom(...HOSTILE_STRINGS.filter((s) => s.length < 1000 && s !== '' && s.isWellFormed())),
        fc.integer().map(String),
      )
      .map((s) => ({ literal: s })),
  },
);

interface FuzzRequest {
  path: Record<string, { fromPool: number } | { literal: string }>;
  query: Record<string, string | undefined>;
  body: unknown;
}

function requestArbitrary(op: Operation): fc.Arbitrary<FuzzRequest> {
  const params = op.parameters ?? [];
  const pathModel: Record<string, typeof pathValue> = {};
  const queryModel: Record<string, fc.Arbitrary<string>> = {};
  for (const p of params) {
    if (p.in === 'path') pathModel[p.name] = pathValue;
    if (p.in === 'query') queryModel[p.name] = queryValue(p.schema ?? {});
  }
  const bodySchema = op.requestBody?.content?.['application/json']?.schema;
  const body = bodySchema
    ? fc.oneof({ weight: 8, arbitrary: fuzzValue(bodySchema) }, { weight: 1, arbitrary: hostileValue() })
    : fc.constant(undefined);
  return fc.record({
    path: fc.record(pathModel),
    query: fc.record(queryModel, { requiredKeys: [] }),
    body,
  }) as fc.Arbitrary<FuzzRequest>;
}

/** Id-like values in a response (ids, keys, tokens), to aim later requests' path parameters at real rows. */
function collectIds(value: unknown, into: Set<string>, depth = 0): void {
  if (depth > 4 || value === null || typeof value !== 'object') return;
  for (const [key, v] of Object.entries(value)) {
    if ((typeof v === 'string' || typeof v === 'number') && /^(id|key|.*Id|.*Token|token)$/.test(key))
      into.add(String(v));
    else collectIds(v, into, depth + 1);
  }
}

const METHOD_ORDER: Method[] = ['post', 'put', 'get', 'head', 'patch', 'delete'];

describe('fuzzing every route of /openapi.json', () => {
  let service: Service;
  let dataDir: string;
  let db: DatabaseSync;
  let headers: Record<string, string>;
  const operations: Array<[string, Method, Operation]> = [];
  const pool = new Set<string>();

  beforeAll(async () => {
    dataDir = tempDataDir();
    // Thousands of requests a minute from one address with one key: rate limits off, so each reaches its route.
    const noRateLimits = Object.fromEntries(
      [
        'API_PER_KEY',
        'API_PER_ADDRESS',
        'PING_PER_TOKEN',
        'PING_PER_ADDRESS',
        'TRIGGER_PER_TOKEN',
        'TRIGGER_PER_ADDRESS',
      ].map((n) => [`RATE_LIMIT_${n}`, '0']),
    );
    const env = { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: process.env.FUZZ_DEBUG ? 'ERROR' : 'WARN', ...noRateLimits };
    service = await buildService(loadServiceConfig(env), { logger: Boolean(process.env.FUZZ_DEBUG) });
    const { accountId, apiKey } = await createAccount(service.store, 'Fuzz');
    headers = { authorization: `Bearer ${apiKey}`, 'x-service-account': accountId };
    const doc = (await service.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<Method, Operation>>;
    };
    for (const method of METHOD_ORDER) {
      for (const [url, ops] of Object.entries(doc.paths)) if (ops[method]) operations.push([url, method, ops[method]]);
    }
    db = new DatabaseSync(path.join(dataDir, DB_FILE), { readOnly: true });
    // The slug the string generator offers, so generated checks and groups can name a real location.
    const location = await service.app.inject({
      method: 'POST',
      url: '/v1/private-locations',
      headers,
      payload: { name: 'Fuzz', slugName: 'a-slug' },
    });
    expect(location.statusCode).toBe(201);
  });
  afterAll(async () => {
    db?.close();
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const dataVersion = () => (db.prepare('PRAGMA data_version').get() as { data_version: number }).data_version;

  async function send(method: Method, url: string, body: unknown) {
    const started = performance.now();
    const res = await service.app.inject({
      method: method.toUpperCase() as 'GET',
      url,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    return { res, elapsed: performance.now() - started };
  }

  function urlOf(template: string, req: FuzzRequest): string {
    const ids = [...pool];
    const filled = template.replace(/\{(\w+)\}/g, (_, name: string) => {
      const v = req.path[name];
      const raw = v && 'fromPool' in v ? (ids[v.fromPool % Math.max(ids.length, 1)] ?? 'none') : (v?.literal ?? 'none');
      return encodeURIComponent(raw);
    });
    const query = new URLSearchParams(
      Object.entries(req.query).filter((e): e is [string, string] => e[1] !== undefined),
    );
    return query.size > 0 ? `${filled}?${query}` : filled;
  }

  it('has operations to fuzz', () => {
    expect(operations.length).toBeGreaterThan(50);
  });

  it('answers no request with a 5xx, slowly, or with a write behind a 4xx', async () => {
    console.info(`fuzz-routes: seed ${SEED}, ${RUNS_PER_OPERATION} runs per operation (FUZZ_SEED, FUZZ_RUNS)`);
    const failures: string[] = [];
    for (const [template, method, op] of operations) {
      const property = fc.asyncProperty(requestArbitrary(op), async (req) => {
        const url = urlOf(template, req);
        const before = dataVersion();
        let { res, elapsed } = await send(method, url, req.body);
        // A hang repeats; a stall of this shared machine does not. Reads are timed twice before failing.
        if (elapsed >= SLOW_MS && (method === 'get' || method === 'head'))
          elapsed = Math.min(elapsed, (await send(method, url, req.body)).elapsed);
        const what = `${method.toUpperCase()} ${url} → ${res.statusCode} ${res.body.slice(0, 300)}`;
        if (process.env.FUZZ_DEBUG) console.log(what.slice(0, 400));
        expect(res.statusCode, what).toBeLessThan(500);
        expect(elapsed, `${what} took ${Math.round(elapsed)} ms`).toBeLessThan(SLOW_MS);
        if (res.statusCode >= 400) expect(dataVersion(), `${what} wrote to the database`).toBe(before);
        else if (res.headers['content-type']?.toString().startsWith('application/json')) collectIds(res.json(), pool);
      });
      const outcome = await fc.check(property, { seed: SEED, numRuns: RUNS_PER_OPERATION });
      if (outcome.failed)
        failures.push(
          `${method.toUpperCase()} ${template} (seed ${SEED}, path ${outcome.counterexamplePath}): ${String(outcome.errorInstance)}`,
        );
    }
    expect(failures).toEqual([]);
  }, 240_000);
});
