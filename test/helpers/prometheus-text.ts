/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for tests that scrape
 * /metrics: every line must be a HELP or TYPE comment or a sample, or parsing throws naming the line.
 * prom-client can write the format but not read it, and no parser is among the dependencies.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: string;
  help: string;
}

export interface Exposition {
  families: Map<string, Family>;
  samples: Sample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: (-?\\d+))?$`);
const COMMENT = new RegExp(`^# (HELP|TYPE) (${NAME}) (.*)$`);
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/y;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** As Prometheus reads a value (Go's ParseFloat): Inf and NaN in any case, which prom-client's "Nan" relies on. */
function number(text: string, line: string): number {
  const special = text.toLowerCase();
  if (special === '+inf' || special === 'inf') return Number.POSITIVE_INFINITY;
  if (special === '-inf') return Number.NEGATIVE_INFINITY;
  if (special === 'nan') return Number.NaN;
  const n = Number(text);
  if (text === '' || Number.isNaN(n)) throw new Error(`not a number in: ${line}`);
  return n;
}

function labels(text: string | undefined, line: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!text) return out;
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const m = LABEL.exec(text);
    if (!m) throw new Error(`bad label set in: ${line}`);
    out[m[1] as string] = (m[2] as string).replace(/\\(.)/g, (_all, c: string) => (c === 'n' ? '\n' : c));
  }
  return out;
}

export function parseExposition(text: string): Exposition {
  const families = new Map<string, Family>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const comment = COMMENT.exec(line);
    if (comment) {
      const [, kind, name, rest] = comment as unknown as [string, string, string, string];
      const family = families.get(name) ?? { name, type: 'untyped', help: '' };
      if (kind === 'TYPE' && !TYPES.has(rest)) throw new Error(`unknown type in: ${line}`);
      if (kind === 'TYPE') family.type = rest;
      else family.help = rest;
      families.set(name, family);
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample, HELP or TYPE line: ${line}`);
    samples.push({ name: m[1] as string, labels: labels(m[2], line), value: number(m[3] as string, line) });
  }
  return { families, samples };
}

/** The family a sample belongs to (a histogram's _bucket, _sum and _count belong to its base name). */
export function familyOf(exposition: Exposition, sampleName: string): Family | undefined {
  const direct = exposition.families.get(sampleName);
  if (direct) return direct;
  const base = sampleName.replace(/_(bucket|sum|count)$/, '');
  const family = exposition.families.get(base);
  return family && (family.type === 'histogram' || family.type === 'summary') ? family : undefined;
}

/** The value of the one sample with this name and exactly these labels; 0 when there is none. */
export function sampleValue(exposition: Exposition, name: string, want: Record<string, string> = {}): number {
  const keys = Object.keys(want);
  const found = exposition.samples.filter(
    (s) =>
      s.name === name && Object.keys(s.labels).length === keys.length && keys.every((k) => s.labels[k] === want[k]),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} with labels ${JSON.stringify(want)}`);
  return found[0]?.value ?? 0;
}

/** The samples alone, for tests that look values up by some of their labels (valueWithLabels). */
export function parsePromText(text: string): Sample[] {
  return parseExposition(text).samples;
}

/** The value of the one sample with this name and at least these labels; undefined when there is none. */
export function valueWithLabels(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}
