/**
 * A plain TCP connection for the protocol checks (TCP, SSL), through the API check's connectOnce
 * (api/connect.ts: resolution per USE_OS_DNS_RESOLVER, family fallback, timing marks), with what the
 * runners need for error messages and details kept in one place: the phase reached, the address
 * tried, and how the name was resolved.
 */
import type net from 'node:net';
import { type ResolvedAddress, type ResolvedVia, connectOnce } from '../api/connect.ts';
import type { RequestPhase } from '../api/errors.ts';
import type { HopMarks } from '../api/timings.ts';

/** Progress of one connection, updated as it goes (read it after a failure too). */
export interface ConnectTrack {
  phase: RequestPhase;
  address: ResolvedAddress | null;
  resolvedVia: ResolvedVia | null;
}

export function newTrack(): ConnectTrack {
  return { phase: 'setup', address: null, resolvedVia: null };
}

export interface TrackedConnect {
  hostname: string;
  port: number;
  ipFamily: string;
  useOsDnsResolver: boolean;
  signal: AbortSignal;
  hop: HopMarks;
  track: ConnectTrack;
}

/** Resolves and connects (no TLS); the phase ends at 'connect', the caller moves it on. */
export function connectTracked(o: TrackedConnect): Promise<net.Socket> {
  return connectOnce(o.hostname, o.port, false, {
    ipFamily: o.ipFamily === 'IPv6' ? 'IPv6' : 'IPv4',
    useOsDnsResolver: o.useOsDnsResolver,
    // Only read for TLS, which connectOnce does not do here.
    skipSSL: true,
    signal: o.signal,
    hop: o.hop,
    onPhase: (p) => {
      o.track.phase = p;
    },
    onAddress: (a, via) => {
      o.track.address = a;
      o.track.resolvedVia = via;
    },
    onTls: () => {},
  });
}
