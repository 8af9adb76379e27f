/**
 * The reference OpenAPI document as Ajv validators of response bodies, one per operation and status.
 * It is read from the repository's extract of it (test/fixtures/reference/, whose README says where it
 * comes from and how to regenerate it), so the tests need nothing outside the clone.
 *
 * The reference is OpenAPI 3.0, whose schemas are not quite JSON Schema; toJsonSchema converts:
 * - `nullable: true` → `null` added to `type` (or to `enum`); a bare `{nullable: true}` → `{type: "null"}`;
 * - boolean `exclusiveMinimum`/`exclusiveMaximum` (draft 4 style) → the numeric form.
 * Unknown keywords (`example`, `x-format`, ...) are ignored (Ajv strict mode off).
 *
 * Differences we keep on purpose (each also stated in docs/api.md):
 * - `format: date`: the reference marks timestamps such as heartbeat event times `date`, which the
 *   spec gives as date-times; a full date or an RFC 3339 date-time is accepted.
 * - DashboardKey.rawKey and privateLocationKeys.rawKey: required by the reference in every response;
 *   here a private location's raw key appears only in the response that creates it, and a dashboard's
 *   never (keys are otherwise shown only masked, as the spec asks of keys).
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { type Json, REFERENCE_EXTRACT } from '../../scripts/extract-reference.ts';

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: Json }> }>;
}
export interface ReferenceDoc {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Json> };
}

export function loadReference(): ReferenceDoc {
  return JSON.parse(readFileSync(REFERENCE_EXTRACT, 'utf8')) as ReferenceDoc;
}

/** OpenAPI 3.0 schema → JSON Schema (draft 7), see the file comment. */
export function toJsonSchema(node: Json): Json {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'nullable' || key === 'example' || key.startsWith('x-')) continue;
    out[key] =
      key === 'properties' || key === 'patternProperties' ? mapValues(value, toJsonSchema) : toJsonSchema(value);
  }
  for (const bound of ['Minimum', 'Maximum'] as const) {
    const flag = out[`exclusive${bound}`];
    const limit = out[bound.toLowerCase()];
    if (typeof flag === 'boolean') {
      delete out[`exclusive${bound}`];
      if (flag && typeof limit === 'number') {
        out[`exclusive${bound}`] = limit;
        delete out[bound.toLowerCase()];
      }
    }
  }
  if ((node as Record<string, Json>).nullable === true) {
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else if (Array.isArray(out.type) && !out.type.includes('null')) out.type = [...out.type, 'null'];
    else if (out.type === undefined && out.$ref === undefined && Object.keys(out).length === 0) out.type = 'null';
    else if (out.$ref !== undefined) return { anyOf: [{ $ref: out.$ref }, { type: 'null' }] };
  }
  return out;
}

function mapValues(value: Json, fn: (v: Json) => Json): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fn(v)]));
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const DATE_OR_DATE_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2}))?$/i;

export class ReferenceValidator {
  readonly doc: ReferenceDoc;
  readonly #ajv: Ajv;
  readonly #cache = new Map<string, ValidateFunction>();

  constructor(doc: ReferenceDoc = loadReference()) {
    this.doc = doc;
    this.#ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(this.#ajv);
    this.#ajv.addFormat('date', DATE_OR_DATE_TIME);
    const schemas = toJsonSchema(doc.components.schemas as Json) as Record<string, Json>;
    // Deliberate: keys are returned masked (see the file comment).
    for (const name of ['DashboardKey', 'privateLocationKeys']) {
      const key = schemas[name] as { required?: string[] };
      if (Array.isArray(key.required)) key.required = key.required.filter((property) => property !== 'rawKey');
    }
    this.#ajv.addSchema({ $id: 'reference', components: { schemas } } as object);
  }

  /** Whether the reference has this operation at all. */
  hasOperation(method: string, template: string): boolean {
    return this.doc.paths[template]?.[method.toLowerCase()] !== undefined;
  }

  /**
   * The schema of (operation, status), or, for a 4xx the reference does not list for it, ApiError
   * (the shape every error of ours has). Undefined means "no body" (e.g. 204).
   */
  responseSchema(method: string, template: string, status: number): Json | undefined {
    const op = this.doc.paths[template]?.[method.toLowerCase()];
    if (!op) throw new Error(`the reference has no operation ${method} ${template}`);
    const response = op.responses[String(status)];
    if (!response) {
      if (status >= 400) return { $ref: 'reference#/components/schemas/ApiError' };
      throw new Error(`the reference lists no ${status} response for ${method} ${template}`);
    }
    const schema = response.content?.['application/json']?.schema;
    if (schema === undefined) return undefined;
    return rebase(schema);
  }

  /**
   * The schema of a response the reference gives only in a media type other than JSON (a badge's
   * image/svg+xml): it applies to the body as one string. Undefined for JSON responses.
   */
  rawBodySchema(method: string, template: string, status: number): Json | undefined {
    const content = this.doc.paths[template]?.[method.toLowerCase()]?.responses[String(status)]?.content;
    if (!content || content['application/json']) return undefined;
    return Object.values(content).find((media) => media.schema !== undefined)?.schema;
  }

  /** Validates a response body; returns Ajv's errors as text, or null when it conforms. */
  check(method: string, template: string, status: number, body: string): string | null {
    const raw = status === 204 ? undefined : this.rawBodySchema(method, template, status);
    // 204 has no body by definition (RFC 9110), whatever content a reference entry lists for it.
    const schema =
      status === 204 ? undefined : raw !== undefined ? rebase(raw) : this.responseSchema(method, template, status);
    if (schema === undefined) return body === '' ? null : `expected no body for ${status}, got ${body.slice(0, 200)}`;
    const id = `${method} ${template} ${status}`;
    let validate = this.#cache.get(id);
    if (!validate) {
      validate = this.#ajv.compile(toJsonSchema(schema) as object);
      this.#cache.set(id, validate);
    }
    let data: unknown = body;
    try {
      if (raw === undefined) data = JSON.parse(body);
    } catch {
      return `body is not JSON: ${body.slice(0, 200)}`;
    }
    if (validate(data)) return null;
    return this.#ajv.errorsText(validate.errors, { separator: '\n', dataVar: 'body' });
  }
}

/** Points `#/components/...` references into the document registered as `reference`. */
function rebase(node: Json): Json {
  if (Array.isArray(node)) return node.map(rebase);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => [
      k,
      k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `reference${v}` : rebase(v),
    ]),
  );
}
