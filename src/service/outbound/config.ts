/**
 * OUTBOUND_ALLOW: what an installation lets the service's outbound calls reach although it is in a
 * blocked range (./ranges.ts), e.g. a webhook receiver on the internal network. A comma-separated
 * list of IP ranges (`10.1.0.0/16`, `fd00::/8`), single addresses (`127.0.0.1`, `::1`) and host
 * names (`hooks.internal`, or `*.corp.example` for its subdomains). Each entry is checked at start.
 */
import { isIP } from 'node:net';
import { type Env, readOptionalString } from '../../shared/env.ts';
import { ConfigError } from '../../shared/errors.ts';

export const OUTBOUND_ALLOW = 'OUTBOUND_ALLOW';

export interface OutboundConfig {
  /** Allowed ranges as `address/prefix`. */
  allowRanges: string[];
  /** Allowed host names, lower case; `*.example.com` allows the subdomains of example.com. */
  allowHosts: string[];
}

const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

export function loadOutboundConfig(env: Env): OutboundConfig {
  const config: OutboundConfig = { allowRanges: [], allowHosts: [] };
  const entries = (readOptionalString(env, OUTBOUND_ALLOW) ?? '').split(',').map((e) => e.trim());
  for (const entry of entries.filter((e) => e !== '')) {
    const range = asRange(entry);
    if (range) config.allowRanges.push(range);
    else config.allowHosts.push(asHost(entry));
  }
  return config;
}

/** `entry` as `address/prefix` if it is an address or a range; a bad prefix is a ConfigError. */
function asRange(entry: string): string | undefined {
  const [rawAddress = '', prefix, ...rest] = entry.split('/');
  const address = rawAddress.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(address);
  if (family === 0) return undefined;
  const max = family === 4 ? 32 : 128;
  if (prefix === undefined) return `${address}/${max}`;
  if (rest.length > 0 || !/^\d{1,3}$/.test(prefix) || Number(prefix) > max) {
    throw badEntry(entry, `the prefix length of an IPv${family} range is 0 to ${max}`);
  }
  return `${address}/${Number(prefix)}`;
}

/** `entry` as a host name, lower case. An IP address in another notation (0x7f000001) is refused: write it plainly. */
function asHost(entry: string): string {
  const wildcard = entry.startsWith('*.');
  const name = (wildcard ? entry.slice(2) : entry).toLowerCase().replace(/\.$/, '');
  const labels = name.split('.');
  if (name.length > 253 || !labels.every((l) => HOST_LABEL.test(l))) {
    throw badEntry(
      entry,
      'use IP addresses, ranges such as 10.1.0.0/16, or host names such as hooks.internal or *.corp.example',
    );
  }
  if (isIP(new URL(`http://${name}/`).hostname) !== 0) {
    throw badEntry(entry, 'write an IP address in dotted (or IPv6) form, e.g. 127.0.0.1');
  }
  return wildcard ? `*.${name}` : name;
}

function badEntry(entry: string, hint: string): ConfigError {
  return new ConfigError(OUTBOUND_ALLOW, `${OUTBOUND_ALLOW} entry ${JSON.stringify(entry)} is not valid: ${hint}`);
}
