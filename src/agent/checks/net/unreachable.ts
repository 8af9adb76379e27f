/**
 * The words for "this agent cannot reach that address at all", the same for every check type: API
 * and TCP checks get these codes from connect(), ICMP checks from the route lookup of a UDP
 * connect() (icmp/route.ts). The kernel says it in several ways: no route (ENETUNREACH), a blackhole
 * route (EINVAL), an `unreachable` route or a neighbour that never answers (EHOSTUNREACH), no source
 * address or a disabled family (EADDRNOTAVAIL, EAFNOSUPPORT), an interface down (ENETDOWN).
 */

const NO_ROUTE_WORDS: Record<string, string> = {
  ENETUNREACH: 'no route to the network',
  EINVAL: 'no route to the network',
  EHOSTUNREACH: 'no route to the host',
  EADDRNOTAVAIL: 'no usable source address',
  EAFNOSUPPORT: 'the address family is disabled on this agent',
  ENETDOWN: 'the network is down',
};

/** Whether a connect error code means the address cannot be reached from here (see above). */
export function isNoRouteCode(code: string | undefined): boolean {
  return code !== undefined && Object.hasOwn(NO_ROUTE_WORDS, code);
}

/** One address that could not be reached: `where` is how to show it (`10.0.0.1` or `10.0.0.1:443`). */
export interface NoRoute {
  where: string;
  code: string;
}

/**
 * `Network unreachable: this agent has no route to <target> (<where>: <why>; …)`; "Host unreachable"
 * when every address was a host that could not be reached.
 */
export function noRouteMessage(target: string, failures: readonly NoRoute[]): string {
  const head =
    failures.length > 0 && failures.every((f) => f.code === 'EHOSTUNREACH')
      ? 'Host unreachable'
      : 'Network unreachable';
  const why = failures.map((f) => `${f.where}: ${NO_ROUTE_WORDS[f.code] ?? f.code}`).join('; ');
  return `${head}: this agent has no route to ${target}${why ? ` (${why})` : ''}`;
}
