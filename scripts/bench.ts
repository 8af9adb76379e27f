/**
 * `npm run bench -- <name> [flags]`: runs scripts/bench/<name>.ts, which prints one JSON line.
 * Figures and the machine they came from are recorded in BENCHMARKS.md.
 */
import { readdirSync } from 'node:fs';

const [name, ...args] = process.argv.slice(2);
const available = readdirSync(new URL('./bench/', import.meta.url))
  .filter((f) => f.endsWith('.ts') && !f.startsWith('_'))
  .map((f) => f.replace(/\.ts$/, ''));
if (!name || !available.includes(name)) {
  process.stderr.write(`bench: ${name ? `unknown benchmark ${JSON.stringify(name)}` : 'name a benchmark'}; use one of ${available.join(', ')}\n`);
  process.exit(2);
}
const mod = (await import(`./bench/${name}.ts`)) as { run(args: string[]): Promise<Record<string, unknown>> };
const result = await mod.run(args);
process.stdout.write(`${JSON.stringify({ bench: name, ...result })}\n`);
process.exit(0);
