/**
 * TRUST_PROXY: whose X-Forwarded-For the service believes, for the client address that per-address
 * rate limits (and logs) use. Off by default: anyone can send that header, so believing it from
 * everyone would let a client pick a fresh address for every request. The value is Fastify's
 * `trustProxy` option: true (every hop; only when nothing but the proxy can reach the service), a
 * hop count, or the proxies' addresses and CIDR ranges (proxy-addr's names loopback, linklocal
 * and uniquelocal too).
 */
import { isIP } from 'node:net';
import { ConfigError } from '../../shared/errors.ts';
import { type Env, readOptionalString } from '../../shared/env.ts';

export type TrustProxy = boolean | number | string;

const NAMED_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

export function loadTrustProxy(env: Env): TrustProxy {
  const value = readOptionalString(env, 'TRUST_PROXY');
  if (value === undefined || /^(false|off|no)$/i.test(value)) return false;
  if (/^(true|on|yes)$/i.test(value)) return true;
  if (/^\d+$/.test(value)) return Number(value);
  const entries = value.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const problem = entryProblem(entry);
    if (problem) {
      throw new ConfigError(
        'TRUST_PROXY',
        `TRUST_PROXY=${JSON.stringify(value)} is not allowed: ${problem}; use false, true, a hop count, or proxy addresses and CIDR ranges separated by commas (e.g. 10.0.0.0/8,loopback)`,
      );
    }
  }
  return entries.join(',');
}

/** Why one comma-separated entry is not an address, a CIDR range or a named range; undefined when it is. */
function entryProblem(entry: string): string | undefined {
  if (NAMED_RANGES.includes(entry)) return undefined;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0)
    return `${JSON.stringify(entry)} is not an IP address, a CIDR range or one of ${NAMED_RANGES.join(', ')}`;
  if (prefix === undefined) return undefined;
  const bits = family === 4 ? 32 : 128;
  if (!/^\d+$/.test(prefix) || Number(prefix) > bits)
    return `${JSON.stringify(entry)} has a prefix length outside 0 to ${bits}`;
  return undefined;
}

/** Fastify's option for a TRUST_PROXY value; its types omit the hop count it accepts, so a count becomes the same function. */
export function fastifyTrustProxy(value: TrustProxy): boolean | string | ((address: string, hop: number) => boolean) {
  if (typeof value !== 'number') return value;
  return (_address, hop) => hop < value;
}
