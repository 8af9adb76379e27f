/**
 * Reads a V8 CPU profile (`node --cpu-prof` writes one .cpuprofile per process: the agent's with
 * `npm run bench -- e2e --profile DIR`, the service's with OUTPOST_BENCH_SERVICE_FLAGS) and prints the
 * top entries by self time, as one JSON line, and the same summed by file.
 *
 *   node scripts/bench/_profile.ts DIR-or-FILE [--top 15] [--from S] [--to S] [--timeline]
 *
 * With a directory, the newest .cpuprofile in it is read. `--from`/`--to` keep the samples between
 * those seconds after the profile started (a benchmark's measured window, not its set-up);
 * `--timeline` prints the busy share of each 5 s instead, to find that window.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function newestProfile(target: string): string {
  if (!statSync(target).isDirectory()) return target;
  const files = readdirSync(target)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => path.join(target, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (!files[0]) throw new Error(`${target}: no .cpuprofile file in it`);
  return files[0];
}

/** The file part of a frame's url, from the project root or node_modules on, so lines stay short. */
function shortUrl(url: string): string {
  const i = url.lastIndexOf('node_modules/');
  if (i !== -1) return url.slice(i + 'node_modules/'.length);
  const d = url.indexOf('/dist/');
  return d !== -1 ? url.slice(d + 1) : url.replace(/^file:\/\//, '');
}

/** Seconds after the profile started at which each sample was taken. */
function sampleSeconds(profile: CpuProfile): number[] {
  let us = 0;
  return profile.timeDeltas.map((d) => {
    us += d;
    return us / 1e6;
  });
}

/** Microseconds of self time per key, where `key` names a node, for samples in [from, to) seconds. */
function selfTime(
  profile: CpuProfile,
  key: (n: ProfileNode) => string,
  from = 0,
  to = Number.POSITIVE_INFINITY,
): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const at = sampleSeconds(profile);
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    if (!node || (at[i] ?? 0) < from || (at[i] ?? 0) >= to) return;
    const k = key(node);
    totals.set(k, (totals.get(k) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return totals;
}

function top(
  totals: Map<string, number>,
  all: number,
  n: number,
): Array<{ entry: string; ms: number; percent: number }> {
  return [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([entry, us]) => ({ entry, ms: Math.round(us / 100) / 10, percent: Math.round((us / all) * 1000) / 10 }));
}

/** Busy share of each 5 s of the profile (idle samples are the thread waiting). */
function timeline(profile: CpuProfile): Array<{ s: number; busyPercent: number }> {
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  const at = sampleSeconds(profile);
  const bins: Array<{ busy: number; all: number }> = [];
  profile.samples.forEach((id, i) => {
    const k = Math.floor((at[i] ?? 0) / 5);
    const bin = bins[k] ?? { busy: 0, all: 0 };
    bins[k] = bin;
    bin.all += profile.timeDeltas[i] ?? 0;
    if (!idle.has(id)) bin.busy += profile.timeDeltas[i] ?? 0;
  });
  return bins.map((b, i) => ({ s: i * 5, busyPercent: b ? Math.round((b.busy / Math.max(1, b.all)) * 100) : 0 }));
}

const { values, positionals } = parseArgs({
  options: {
    top: { type: 'string', default: '15' },
    from: { type: 'string', default: '0' },
    to: { type: 'string' },
    timeline: { type: 'boolean', default: false },
  },
  allowPositionals: true,
});
if (!positionals[0]) {
  process.stderr.write(
    'usage: node scripts/bench/_profile.ts DIR-or-FILE [--top 15] [--from S] [--to S] [--timeline]\n',
  );
  process.exit(2);
}
const file = newestProfile(positionals[0]);
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
const n = Number(values.top);
const frame = (node: ProfileNode) => {
  const { functionName, url, lineNumber } = node.callFrame;
  return url ? `${functionName || '(anonymous)'} ${shortUrl(url)}:${lineNumber + 1}` : functionName;
};
if (values.timeline) {
  process.stdout.write(`${JSON.stringify({ file, timeline: timeline(profile) })}\n`);
  process.exit(0);
}
const from = Number(values.from);
const to = values.to === undefined ? Number.POSITIVE_INFINITY : Number(values.to);
const functions = selfTime(profile, frame, from, to);
const all = [...functions.values()].reduce((a, b) => a + b, 0);
// Idle is time the thread waited, not work: percentages are of the busy time.
const busy = all - (functions.get('(idle)') ?? 0);
functions.delete('(idle)');
const files = selfTime(
  profile,
  (node) => (node.callFrame.url ? shortUrl(node.callFrame.url) : node.callFrame.functionName),
  from,
  to,
);
files.delete('(idle)');
process.stdout.write(
  `${JSON.stringify({ file, from, to, busyMs: Math.round(busy / 1000), topFunctions: top(functions, busy, n), topFiles: top(files, busy, n) }, null, 1)}\n`,
);
