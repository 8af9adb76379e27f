/** Small helpers shared by the benchmarks: percentiles, flags, process RSS and CPU from /proc. */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Pool } from 'undici';
import { ConfigError } from '../../src/shared/errors.ts';

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

/** The middle value (the lower of the two middle ones for an even count); NaN for none. */
export function median(values: number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * One series' value in a Prometheus text exposition, named as it is written there (with its
 * labels, e.g. `x_count{kind="major"}`); NaN when it is missing.
 */
export function metricValue(text: string, series: string): number {
  return Number(new RegExp(`^${escapeRegExp(series)} (\\S+)`, 'm').exec(text)?.[1] ?? Number.NaN);
}

/** The sum of every series of a metric, whatever its labels; NaN when it has none. */
export function metricSum(text: string, name: string): number {
  const values = [...text.matchAll(new RegExp(`^${escapeRegExp(name)}(?:\\{[^}]*\\})? (\\S+)`, 'gm'))];
  return values.length === 0 ? Number.NaN : values.reduce((sum, m) => sum + Number(m[1]), 0);
}

/** `x` rounded to `digits` decimal places, for the figures a benchmark prints. */
export function roundTo(x: number, digits = 2): number {
  return Math.round(x * 10 ** digits) / 10 ** digits;
}

export function summarize(values: number[]): { p50: number; p99: number; max: number; n: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    p50: roundTo(percentile(sorted, 50)),
    p99: roundTo(percentile(sorted, 99)),
    max: roundTo(sorted.at(-1) ?? Number.NaN),
    n: sorted.length,
  };
}

export function numberFlags<T extends Record<string, number>>(args: string[], defaults: T): T {
  const options = Object.fromEntries(Object.keys(defaults).map((k) => [k, { type: 'string' as const }]));
  const { values } = parseArgs({ args, options, strict: true });
  const out: Record<string, number> = { ...defaults };
  for (const [k, v] of Object.entries(values)) {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0)
      throw new ConfigError(`--${k}`, `--${k} ${JSON.stringify(v)}: use a positive number`);
    out[k] = n;
  }
  return out as T;
}

/** Resident set size of a process in MB, from /proc/<pid>/status. */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return Math.round((kb / 1024) * 10) / 10;
}

/** Peak resident set size (VmHWM) of a process in MB. */
export function peakRssMb(pid: number | 'self' = 'self'): number {
  const kb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN);
  return Math.round((kb / 1024) * 10) / 10;
}

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of stat; after the ") " split they are at 11 and 12.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** p50/p99 of `n` GETs, one at a time over `pool`, of the paths `paths` gives; any answer but 200 stops the benchmark. */
export async function measureGets(pool: Pool, headers: Record<string, string>, paths: () => string, n: number) {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const p = paths();
    const t = performance.now();
    const res = await pool.request({ method: 'GET', path: p, headers });
    const body = await res.body.text();
    times.push(performance.now() - t);
    if (res.statusCode !== 200) throw new Error(`GET ${p}: HTTP ${res.statusCode} ${body}`);
  }
  return summarize(times);
}
