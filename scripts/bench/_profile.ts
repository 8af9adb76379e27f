/**
 * Summarises a V8 CPU profile (`node --cpu-prof` writes one .cpuprofile per process) by self time:
 * the functions the samples landed in, summed over every call site, highest first.
 *
 *   node scripts/bench/_profile.ts <file.cpuprofile | folder> [--top 15]
 *
 * A folder means its newest .cpuprofile. Prints one JSON line: total sampled ms and the top entries.
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

export interface SelfTimeEntry {
  fn: string;
  where: string;
  selfMs: number;
  percent: number;
}

/** The newest .cpuprofile in `folder`, or `file` itself. */
export function profileFile(fileOrFolder: string): string {
  if (!statSync(fileOrFolder).isDirectory()) return fileOrFolder;
  const newest = readdirSync(fileOrFolder)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => path.join(fileOrFolder, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (!newest) throw new Error(`${fileOrFolder}: no .cpuprofile in this folder`);
  return newest;
}

/** Where a frame is, short: the path from src/ or node_modules/ on, or node's own module name. */
function shortWhere(url: string, line: number): string {
  if (url === '') return '(native)';
  const cut = url.replace(/^file:\/\//, '').replace(/^.*?\/(src|dist|node_modules)\//, '$1/');
  return `${cut}:${line + 1}`;
}

/** Self time per function (name and place), highest first; `(idle)` and `(program)` included, so the shares add up. */
export function selfTimes(profile: CpuProfile, top: number): { totalMs: number; entries: SelfTimeEntry[] } {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const bySite = new Map<string, { fn: string; where: string; us: number }>();
  let totalUs = 0;
  for (const [i, nodeId] of profile.samples.entries()) {
    const us = profile.timeDeltas[i] ?? 0;
    const frame = byNode.get(nodeId)?.callFrame;
    if (!frame) continue;
    totalUs += us;
    const fn = frame.functionName || '(anonymous)';
    const where = shortWhere(frame.url, frame.lineNumber);
    const key = `${fn}\u0000${where}`;
    const site = bySite.get(key) ?? { fn, where, us: 0 };
    site.us += us;
    bySite.set(key, site);
  }
  const entries = [...bySite.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, top)
    .map((s) => ({ fn: s.fn, where: s.where, selfMs: Math.round(s.us / 100) / 10, percent: Math.round((s.us / totalUs) * 1000) / 10 }));
  return { totalMs: Math.round(totalUs / 1000), entries };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '15' } }, allowPositionals: true });
  const target = positionals[0];
  if (!target) throw new Error('usage: node scripts/bench/_profile.ts <file.cpuprofile | folder> [--top 15]');
  const top = Number(values.top);
  if (!Number.isInteger(top) || top <= 0) throw new Error(`--top ${values.top}: use a positive whole number`);
  const file = profileFile(target);
  const summary = selfTimes(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, top);
  process.stdout.write(`${JSON.stringify({ file, ...summary })}\n`);
}
