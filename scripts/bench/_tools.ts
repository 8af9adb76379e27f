/**
 * The Debian tools the benchmarks drive (peers, targets, C load generators). Each benchmark names the
 * tools it needs before it builds or starts anything, so a missing one stops it at once with the
 * package to install (ConfigError: `npm run bench` prints it and exits 2) instead of failing half-way.
 */
import { isExecutable } from '../../src/shared/executable.ts';
import { delimiter, join } from 'node:path';
import { ConfigError } from '../../src/shared/errors.ts';

export interface Tool {
  /** The program's file name. */
  bin: string;
  /** The Debian package that installs it. */
  pkg: string;
}

export const TOOLS = {
  prometheus: { bin: 'prometheus', pkg: 'prometheus' },
  blackbox: { bin: 'prometheus-blackbox-exporter', pkg: 'prometheus-blackbox-exporter' },
  alertmanager: { bin: 'prometheus-alertmanager', pkg: 'prometheus-alertmanager' },
  wrk: { bin: 'wrk', pkg: 'wrk' },
  nginx: { bin: 'nginx', pkg: 'nginx' },
  dnsmasq: { bin: 'dnsmasq', pkg: 'dnsmasq-base' },
  fping: { bin: 'fping', pkg: 'fping' },
} as const satisfies Record<string, Tool>;

// Daemons such as nginx and dnsmasq live in sbin, which an ordinary user's PATH often leaves out.
const SBIN = ['/usr/local/sbin', '/usr/sbin', '/sbin'];

/** The error for a missing tool: its package and the command that installs it. */
export function missingTool(tool: Tool): ConfigError {
  return new ConfigError(
    tool.bin,
    `${tool.bin} is not installed: install Debian's ${tool.pkg} (apt-get install -y ${tool.pkg})`,
  );
}

/** The absolute path of `tool`, from PATH or sbin; a ConfigError naming its package when it is missing. */
export function findTool(tool: Tool): string {
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter((d) => d !== ''), ...SBIN];
  const found = dirs.map((d) => join(d, tool.bin)).find(isExecutable);
  if (!found) throw missingTool(tool);
  return found;
}

/** Checks every tool at once, so the message lists all that are missing. */
export function requireTools(...tools: Tool[]): void {
  const missing = tools.filter((t) => {
    try {
      findTool(t);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length === 0) return;
  const names = missing.map((t) => t.bin).join(', ');
  const pkgs = [...new Set(missing.map((t) => t.pkg))].join(' ');
  throw new ConfigError(
    names,
    `${names} ${missing.length === 1 ? 'is' : 'are'} not installed: install Debian's ${pkgs} (apt-get install -y ${pkgs})`,
  );
}
