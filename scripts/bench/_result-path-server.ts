/**
 * The service side of the result-path benchmark (./result-path.ts), in a process of its own so its
 * CPU can be read from /proc apart from the client's: the agent API and dispatcher over a real SQLite
 * store (test/helpers/dispatch-harness.ts) on loopback, with `runs` runs leased to one agent.
 * Prints one JSON line: the URL, the location key, the agent id and the leased jobs. With
 * OUTPOST_BENCH_PROFILE_DIR set it profiles from the line `profile` on stdin until stdin closes.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { startHarness } from '../../test/helpers/dispatch-harness.ts';

const runs = Number(process.argv[2] ?? '1000');
const h = await startHarness({ listen: true });
const t = await h.tenant();
const agent = await h.agent(t);
const checks = await Promise.all(Array.from({ length: runs }, (_, i) => h.check(t, { name: `bench ${i}` })));
for (const check of checks) await h.dispatcher.enqueue(check, t.location.id, h.clock.now);
const jobs = [];
while (jobs.length < runs) jobs.push(...(await agent.lease({ slots: { uptime: 1000 } })));
process.stdout.write(`${JSON.stringify({ url: h.url, key: t.key, agentId: agent.agentId, jobs })}\n`);

const profileDir = process.env.OUTPOST_BENCH_PROFILE_DIR;
const session = new Session();
const input = createInterface({ input: process.stdin });
input.on('line', async (line) => {
  if (line !== 'profile' || !profileDir) return;
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
});
input.on('close', async () => {
  if (profileDir && session) {
    try {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(path.join(profileDir, `result-path-${process.pid}.cpuprofile`), JSON.stringify(profile));
    } catch {
      // Not profiling (no `profile` line came): nothing to write.
    }
  }
  await h.close();
  process.exit(0);
});
