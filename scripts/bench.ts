/**
 * `npm run bench -- <name> [flags]`: runs scripts/bench/<name>.ts, which prints one JSON line.
 * Figures and the machine they came from are recorded in BENCHMARKS.md. Every line carries the
 * machine's CPU count, Node's version and the load average at start and at end: a figure taken on a
 * busy machine says so itself.
 * A bad flag or a missing tool (ConfigError) is one line on stderr and exit 2.
 */
import { readdirSync } from 'node:fs';
import os from 'node:os';
import { ConfigError, EXIT } from '../src/shared/errors.ts';

const [name, ...args] = process.argv.slice(2);
const available = readdirSync(new URL('./bench/', import.meta.url))
  .filter((f) => f.endsWith('.ts') && !f.startsWith('_'))
  .map((f) => f.replace(/\.ts$/, ''));
if (!name || !available.includes(name)) {
  process.stderr.write(
    `bench: ${name ? `unknown benchmark ${JSON.stringify(name)}` : 'name a benchmark'}; use one of ${available.join(', ')}\n`,
  );
  process.exit(EXIT.config);
}

const loadAverage = () => os.loadavg().map((x) => Math.round(x * 100) / 100);
/** parseArgs's errors for an unknown flag or a missing value. */
const isArgsError = (err: unknown) => String((err as NodeJS.ErrnoException).code ?? '').startsWith('ERR_PARSE_ARGS');

const start = loadAverage();
try {
  const mod = (await import(`./bench/${name}.ts`)) as { run(args: string[]): Promise<Record<string, unknown>> };
  const result = await mod.run(args);
  const machine = {
    cpus: os.availableParallelism(),
    node: process.version,
    loadAverage: { start, end: loadAverage() },
  };
  process.stdout.write(`${JSON.stringify({ bench: name, ...result, machine })}\n`);
  process.exit(EXIT.ok);
} catch (err) {
  if (!(err instanceof ConfigError) && !isArgsError(err)) throw err;
  process.stderr.write(`bench ${name}: ${(err as Error).message}\n`);
  process.exit(EXIT.config);
}
