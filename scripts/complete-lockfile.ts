/**
 * `node scripts/complete-lockfile.ts`: adds lockfile entries for optional per-platform packages that
 * npm left out. Run it after `npm install` changes package-lock.json.
 *
 * Why: the registry mirror this project is developed against carries only the linux glibc builds of
 * some native tools (Biome's @biomejs/cli-*), so `npm install` here writes a lockfile without the other
 * platforms' entries, and `npm ci` then refuses it ("Missing: @biomejs/cli-darwin-x64@ from lock
 * file") here and everywhere else. Optional packages for another platform are never downloaded, so an
 * entry needs only the version and the os/cpu/libc that tell npm to skip it; npm fills the rest in on a
 * machine that does install it.
 */
import { readFileSync, writeFileSync } from 'node:fs';

type Entry = { version?: string; optionalDependencies?: Record<string, string>; [key: string]: unknown };
const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8')) as { packages: Record<string, Entry> };

/** os, cpu and libc from a platform package's name, e.g. cli-linux-arm64-musl. */
function platformOf(name: string): { os: string; cpu: string; libc?: string } | undefined {
  const os = ['darwin', 'win32', 'linux', 'android', 'freebsd', 'openbsd', 'netbsd', 'aix', 'sunos'].find((o) =>
    name.includes(`-${o}-`),
  );
  const cpu = ['x64', 'arm64', 'ia32', 'arm', 'ppc64', 's390x', 'riscv64', 'loong64', 'mips64el'].find((c) =>
    new RegExp(`-${c}(-|$)`).test(name),
  );
  if (!os || !cpu) return undefined;
  return { os, cpu, ...(name.endsWith('-musl') ? { libc: 'musl' } : os === 'linux' ? { libc: 'glibc' } : {}) };
}

let added = 0;
for (const [key, entry] of Object.entries(lock.packages)) {
  if (!key.startsWith('node_modules/') || !entry.optionalDependencies) continue;
  for (const [dep, spec] of Object.entries(entry.optionalDependencies)) {
    const depKey = `node_modules/${dep}`;
    if (lock.packages[depKey] || !/^\d+\.\d+\.\d+/.test(spec)) continue;
    const platform = platformOf(dep);
    if (!platform) continue;
    lock.packages[depKey] = {
      version: spec,
      cpu: [platform.cpu],
      ...(entry.dev ? { dev: true } : {}),
      ...(platform.libc ? { libc: [platform.libc] } : {}),
      optional: true,
      os: [platform.os],
    };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)),
);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(`added ${added} optional platform entr${added === 1 ? 'y' : 'ies'} to package-lock.json\n`);
