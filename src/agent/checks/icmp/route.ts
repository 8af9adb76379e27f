/**
 * Picks the address an ICMP run pings: the first of the resolved addresses (preferred family first)
 * that this machine has a route to. fping says nothing when a send fails (no route, IPv6 disabled),
 * so routability is asked of the kernel beforehand: connect() on a UDP socket does the route lookup
 * and fails with ENETUNREACH / EADDRNOTAVAIL / EAFNOSUPPORT, without sending a packet.
 */
import dgram from 'node:dgram';
import type { Family } from './pinger.ts';

export interface Candidate {
  address: string;
  family: Family;
}

/** Null when routable, else the errno code that says why not. */
export function routeError(c: Candidate): Promise<string | null> {
  return new Promise((resolve) => {
    let socket: dgram.Socket;
    try {
      socket = dgram.createSocket(c.family === 6 ? 'udp6' : 'udp4');
    } catch (err) {
      resolve((err as NodeJS.ErrnoException).code ?? 'EAFNOSUPPORT');
      return;
    }
    const done = (code: string | null): void => {
      socket.close();
      resolve(code);
    };
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? 'ENETUNREACH'));
    // Port 9 (discard): any port does, nothing is sent. The callback gets a connect error.
    socket.connect(9, c.address, (err?: NodeJS.ErrnoException | null) =>
      done(err ? (err.code ?? 'ENETUNREACH') : null),
    );
  });
}

/**
 * The first routable candidate, or the reasons none is. The order is the caller's (preferred
 * family first), so a missing IPv6 route falls back to IPv4 and the reverse.
 */
export async function pickRoutable(
  candidates: readonly Candidate[],
): Promise<
  | { chosen: Candidate; skipped: Array<Candidate & { code: string }> }
  | { chosen: null; skipped: Array<Candidate & { code: string }> }
> {
  const skipped: Array<Candidate & { code: string }> = [];
  for (const c of candidates) {
    const code = await routeError(c);
    if (code === null) return { chosen: c, skipped };
    skipped.push({ ...c, code });
  }
  return { chosen: null, skipped };
}
