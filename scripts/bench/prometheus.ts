/**
 * How many checks one machine runs, end to end, against the peer operators compare with: Debian's
 * Prometheus scraping blackbox_exporter's http_2xx probe of N targets every 10 s, and Outpost's service
 * with one agent running N API checks every 10 s (status asserted), both against the same local nginx,
 * on the same machine, one side after the other. N steps up until a side falls behind (_capacity.ts
 * says when); each side's capacity is the last step it held, and the ratio is Outpost's over Prometheus's.
 *
 *   npm run bench -- prometheus [--steps 1000,2000,4000,8000,16000] [--window 60] [--warmup 20] [--late-bound-ms 1000]
 *
 * A quick run: --steps 200,400 --window 30. Progress goes to stderr, the JSON line to stdout.
 */
import { parseArgs } from 'node:util';
import { ConfigError } from '../../src/shared/errors.ts';
import { startBlackbox, startNginx } from './_blackbox.ts';
import { type Capacity, type Criteria, capacityOf, capacityRatio, fellBehind, type StepFigures } from './_capacity.ts';
import { startOutpost } from './_outpost-steps.ts';
import { INTERVAL_SECONDS, prometheusStep, prometheusVersion } from './_prometheus.ts';
import { requireTools, TOOLS } from './_tools.ts';

const MIN_HELD_FRACTION = 0.95;

interface Flags {
  steps: number[];
  window: number;
  warmup: number;
  lateBoundMs: number;
}

function positive(flag: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0)
    throw new ConfigError(flag, `${flag} ${JSON.stringify(text)}: use a positive number`);
  return n;
}

export function parseFlags(args: string[]): Flags {
  const options = {
    steps: { type: 'string' },
    window: { type: 'string' },
    warmup: { type: 'string' },
    'late-bound-ms': { type: 'string' },
  } as const;
  const { values } = parseArgs({ args, options, strict: true });
  const steps = (values.steps ?? '1000,2000,4000,8000,16000').split(',').map((s) => Number(s.trim()));
  if (!steps.every((n, i) => Number.isInteger(n) && n > 0 && (i === 0 || n > steps[i - 1]!))) {
    throw new ConfigError(
      '--steps',
      `--steps ${JSON.stringify(values.steps)}: use rising positive whole numbers separated by commas, e.g. 1000,2000,4000`,
    );
  }
  const window = positive('--window', values.window, 60);
  if (window < INTERVAL_SECONDS * 2)
    throw new ConfigError('--window', `--window ${window}: use at least ${INTERVAL_SECONDS * 2} s (two intervals)`);
  return {
    steps,
    window,
    warmup: positive('--warmup', values.warmup, 20),
    lateBoundMs: positive('--late-bound-ms', values['late-bound-ms'], 1000),
  };
}

/** Runs the steps in order until one falls behind; each step's figures with its verdict. */
async function stepUntilBehind<T extends StepFigures>(
  side: string,
  steps: number[],
  c: Criteria,
  step: (n: number) => Promise<T>,
): Promise<Array<T & { fellBehind: string | null }>> {
  const done: Array<T & { fellBehind: string | null }> = [];
  for (const n of steps) {
    const figures = await step(n);
    const verdict = fellBehind(figures, c);
    done.push({ ...figures, fellBehind: verdict });
    process.stderr.write(
      `bench prometheus: ${side} at ${n}: held ${figures.held} of ${figures.expected}, lateness p99 ${figures.lateP99Ms} ms${verdict ? ` — fell behind (${verdict})` : ''}\n`,
    );
    if (verdict) break;
  }
  return done;
}

const capacityFigures = (c: Capacity) => ({ targets: c.n, probesPerSecond: c.n / INTERVAL_SECONDS, kind: c.kind });

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const f = parseFlags(args);
  requireTools(TOOLS.prometheus, TOOLS.blackbox, TOOLS.nginx);
  const criteria: Criteria = { minHeldFraction: MIN_HELD_FRACTION, lateBoundMs: f.lateBoundMs };
  const nginx = await startNginx();
  const blackbox = await startBlackbox();
  try {
    const targetBase = `http://127.0.0.1:${nginx.port}`;
    const window = { window: f.window, warmup: f.warmup };
    const promSteps = await stepUntilBehind('prometheus', f.steps, criteria, (n) =>
      prometheusStep(n, { blackbox, targetBase, ...window }),
    );
    const fleet = await startOutpost(targetBase);
    const outSteps = await stepUntilBehind('outpost', f.steps, criteria, (n) => fleet.step(n, window)).finally(() =>
      fleet.stop(),
    );
    const prometheus = capacityOf(promSteps);
    const outpost = capacityOf(outSteps);
    const { ratio, kind } = capacityRatio(outpost, prometheus);
    return {
      workload: `GET of distinct paths on nginx 127.0.0.1:${nginx.port} (200 {"ok":true}) every ${INTERVAL_SECONDS} s per target: Prometheus scraping blackbox_exporter http_2xx, against Outpost's service + one agent (SQLite) running API checks with the status asserted`,
      intervalSeconds: INTERVAL_SECONDS,
      windowSeconds: f.window,
      warmupSeconds: f.warmup,
      steps: f.steps,
      criteria: {
        ...criteria,
        fallsBehind: `fewer than ${MIN_HELD_FRACTION * 100} % of N x window / ${INTERVAL_SECONDS} s probes done and succeeded in the window, or lateness p99 above ${f.lateBoundMs} ms (Prometheus: the larger of p99 - ${INTERVAL_SECONDS} s and ${INTERVAL_SECONDS} s - p01 of prometheus_target_interval_length_seconds; Outpost: due -> start p99)`,
      },
      prometheus: { version: prometheusVersion(), capacity: capacityFigures(prometheus), steps: promSteps },
      outpost: { capacity: capacityFigures(outpost), steps: outSteps },
      ratio,
      ratioKind: kind,
      ratioNote:
        'outpost.capacity.targets / prometheus.capacity.targets; exact when both sides fell behind at a step run, atLeast/atMost when one side held every step, null when both did (run larger --steps)',
    };
  } finally {
    await blackbox.stop();
    await nginx.stop();
  }
}
