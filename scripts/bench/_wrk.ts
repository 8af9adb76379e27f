/**
 * wrk (Debian's, a C load generator) driving a peer's HTTP endpoint, so the peer's throughput is not
 * limited by a Node client. The Lua script builds each request; its done() prints one JSON line that
 * is read back here (with, for WRK_COUNTED_DONE_LUA, the answers the script counted as failed).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const RESULT_MARK = 'WRK_RESULT ';

const FIELDS = '"requests":%d,"durationUs":%d,"non2xx":%d,"socketErrors":%d,"p50Us":%.0f,"p99Us":%.0f,"maxUs":%.0f';
const VALUES = `summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max`;

/** Lua for done(): wrk's summary and latency (microseconds) as JSON after RESULT_MARK. */
export const WRK_DONE_LUA = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('${RESULT_MARK}{${FIELDS}}\\n',
    ${VALUES}))
end
`;

/**
 * Lua for a script whose response() adds to the global `failures` (each thread has its own): setup()
 * keeps the threads and done() prints their sum with the rest, read back as WrkResult.failures.
 */
export const WRK_COUNTED_DONE_LUA = `
local threads = {}
setup = function(thread) table.insert(threads, thread) end
failures = 0
done = function(summary, latency, requests)
  local e = summary.errors
  local f = 0
  for _, t in ipairs(threads) do f = f + t:get("failures") end
  io.write(string.format('${RESULT_MARK}{${FIELDS},"failures":%d}\\n',
    ${VALUES}, f))
end
`;

export interface WrkResult {
  requestsPerSecond: number;
  /** Answers the script's response() counted as failed, when its done() prints `failures`. */
  failures?: number;
  requests: number;
  non2xx: number;
  socketErrors: number;
  latencyMs: { p50: number; p99: number; max: number };
}

interface WrkRaw {
  requests: number;
  durationUs: number;
  non2xx: number;
  socketErrors: number;
  p50Us: number;
  p99Us: number;
  maxUs: number;
  failures?: number;
}

export interface WrkOptions {
  url: string;
  /** The Lua script; it must include WRK_DONE_LUA. */
  lua: string;
  connections: number;
  seconds: number;
}

const ms = (us: number) => Math.round(us / 10) / 100;

/** Runs wrk with one thread; null when wrk is not installed. */
export async function runWrk(o: WrkOptions): Promise<WrkResult | null> {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-wrk-'));
  try {
    const script = join(dir, 'bench.lua');
    writeFileSync(script, o.lua);
    const args = ['-t1', `-c${o.connections}`, `-d${o.seconds}s`, '-s', script, o.url];
    const { stdout } = await promisify(execFile)('wrk', args, { timeout: (o.seconds + 30) * 1000 });
    const line = stdout.split('\n').find((l) => l.startsWith(RESULT_MARK));
    if (!line) throw new Error(`wrk printed no result line:\n${stdout}`);
    const raw = JSON.parse(line.slice(RESULT_MARK.length)) as WrkRaw;
    return {
      requestsPerSecond: Math.round((raw.requests / (raw.durationUs / 1e6)) * 10) / 10,
      requests: raw.requests,
      ...(raw.failures !== undefined ? { failures: raw.failures } : {}),
      non2xx: raw.non2xx,
      socketErrors: raw.socketErrors,
      latencyMs: { p50: ms(raw.p50Us), p99: ms(raw.p99Us), max: ms(raw.maxUs) },
    };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
