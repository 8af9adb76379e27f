/**
 * The address ranges an outbound call of the service refuses unless the operator allows them
 * (OUTBOUND_ALLOW): the service's own host, the networks around it and cloud metadata endpoints,
 * which a URL supplied by a user must not be able to reach.
 *
 * net.BlockList matches an IPv4 range against the IPv4-mapped IPv6 form too (::ffff:127.0.0.1),
 * so the mapped forms need no entries of their own.
 */
import { BlockList, isIPv6 } from 'node:net';

const BLOCKED_RANGES: ReadonlyArray<{ kind: string; ranges: readonly string[] }> = [
  { kind: 'a loopback', ranges: ['127.0.0.0/8', '::1/128'] },
  { kind: 'an unspecified ("this host")', ranges: ['0.0.0.0/8', '::/128'] },
  { kind: 'a private', ranges: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'] },
  { kind: 'a shared (carrier-grade NAT)', ranges: ['100.64.0.0/10'] },
  { kind: 'a link-local', ranges: ['169.254.0.0/16', 'fe80::/10'] },
  { kind: 'a unique-local', ranges: ['fc00::/7', 'fec0::/10'] },
  { kind: 'an IETF protocol', ranges: ['192.0.0.0/24'] },
  { kind: 'a benchmarking', ranges: ['198.18.0.0/15'] },
  { kind: 'a multicast', ranges: ['224.0.0.0/4', 'ff00::/8'] },
  { kind: 'a reserved', ranges: ['240.0.0.0/4', '::/96', '64:ff9b:1::/48'] },
];

/** A range as `address/prefix`, checked: net.BlockList throws on a malformed one. */
export function addRange(list: BlockList, cidr: string): void {
  const [address = '', prefix = ''] = cidr.split('/');
  list.addSubnet(address, Number(prefix), isIPv6(address) ? 'ipv6' : 'ipv4');
}

const BLOCKED = BLOCKED_RANGES.map(({ kind, ranges }) => {
  const list = new BlockList();
  for (const range of ranges) addRange(list, range);
  return { kind, list };
});

/** The well-known NAT64 prefix: an address in it reaches the IPv4 address in its last 32 bits. */
const NAT64 = new BlockList();
addRange(NAT64, '64:ff9b::/96');

function nat64Embedded(address: string): string | undefined {
  if (!isIPv6(address) || !NAT64.check(address, 'ipv6')) return undefined;
  // The URL parser writes a trailing dotted quad (64:ff9b::10.0.0.1) as two hex groups.
  const groups = new URL(`http://[${address.split('%')[0]}]/`).hostname.slice(1, -1).split(':');
  const [high = 0, low = 0] = groups.slice(-2).map((g) => Number.parseInt(g || '0', 16));
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** What kind of blocked address `address` (an IP address) is, e.g. "a loopback"; undefined when it is not blocked. */
export function blockedKind(address: string): string | undefined {
  const family = isIPv6(address) ? 'ipv6' : 'ipv4';
  const hit = BLOCKED.find(({ list }) => list.check(address, family));
  if (hit) return hit.kind;
  const embedded = nat64Embedded(address);
  return embedded === undefined ? undefined : blockedKind(embedded);
}
