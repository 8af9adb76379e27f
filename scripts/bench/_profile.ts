/**
 * Reads a V8 CPU profile (`node --cpu-prof` writes one .cpuprofile per process: the agent's with
 * `npm run bench -- e2e --profile DIR`, the service's with OUTPOST_BENCH_SERVICE_FLAGS) and prints the
 * top entries by self time, as one JSON line, and the same summed by file.
 *
 *   node scripts/bench/_profile.ts DIR-or-FILE [--top 15]
 *
 * With a directory, the newest .cpuprofile in it is read.
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

/** Microseconds of self time per key, where `key` names a node. */
function selfTime(profile: CpuProfile, key: (n: ProfileNode) => string): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    if (!node) return;
    const k = key(node);
    totals.set(k, (totals.get(k) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return totals;
}

function top(totals: Map<string, number>, all: number, n: number): Array<{ entry: string; ms: number; percent: number }> {
  return [...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([entry, us]) => ({ entry, ms: Math.round(us / 100) / 10, percent: Math.round((us / all) * 1000) / 10 }));
}

const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '15' } }, allowPositionals: true });
if (!positionals[0]) {
  process.stderr.write('usage: node scripts/bench/_profile.ts DIR-or-FILE [--top 15]\n');
  process.exit(2);
}
const file = newestProfile(positionals[0]);
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
const n = Number(values.top);
const frame = (node: ProfileNode) => {
  const { functionName, url, lineNumber } = node.callFrame;
  return url ? `${functionName || '(anonymous)'} ${shortUrl(url)}:${lineNumber + 1}` : functionName;
};
const functions = selfTime(profile, frame);
const all = [...functions.values()].reduce((a, b) => a + b, 0);
// Idle is time the thread waited, not work: percentages are of the busy time.
const busy = all - (functions.get('(idle)') ?? 0);
functions.delete('(idle)');
const files = selfTime(profile, (node) => (node.callFrame.url ? shortUrl(node.callFrame.url) : node.callFrame.functionName));
files.delete('(idle)');
process.stdout.write(
  `${JSON.stringify({ file, busyMs: Math.round(busy / 1000), topFunctions: top(functions, busy, n), topFiles: top(files, busy, n) }, null, 1)}\n`,
);
