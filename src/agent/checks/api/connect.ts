/**
 * DNS and connection set-up for one API check request, done by the agent itself rather than by
 * undici so that each step is timed (DNS answered, TCP 'connect', TLS 'secureConnect'), the check's
 * IP family preference and DNS mode are honoured, and the certificate is read even when it is bad.
 *
 * It is plugged into a fresh undici Client as its `connect` function: one call, one new socket.
 */
import dns from 'node:dns';
import { once } from 'node:events';
import net from 'node:net';
import tls from 'node:tls';
import type { buildConnector } from 'undici';
import type { ApiTlsDetails, CheckTlsMaterial } from '../../../shared/checks/types.ts';
import { type RequestPhase, tlsVerificationError } from './errors.ts';
import { raceAbort } from '../net/run-signal.ts';
import { isNoRouteCode } from '../net/unreachable.ts';
import type { HopMarks } from './timings.ts';
import { describeCertificate, tlsOptionsOf } from './tls.ts';

export type Family = 4 | 6;
export interface ResolvedAddress {
  address: string;
  family: Family;
}

/** How a name was resolved, reported in the result's details for diagnosis. */
import type { ResolvedVia } from '../../../shared/checks/details.ts';

export type { ResolvedVia };

/** Preferred family first, keeping the resolver's order inside each family. */
export function orderByFamily(list: ResolvedAddress[], prefer: Family): ResolvedAddress[] {
  return [...list.filter((a) => a.family === prefer), ...list.filter((a) => a.family !== prefer)];
}

async function lookupAll(host: string, signal: AbortSignal): Promise<ResolvedAddress[]> {
  // getaddrinfo runs on libuv's thread pool and cannot be cancelled; the race lets the run go on.
  const list = await raceAbort(dns.promises.lookup(host, { all: true, order: 'verbatim' }), signal);
  return list.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
}

/**
 * Resolves `host` to addresses, preferred family first.
 *
 * - An IP literal is used as it is (no DNS, dns time 0).
 * - `useOsDnsResolver`: getaddrinfo (dns.lookup), like any program on the machine: /etc/hosts,
 *   nsswitch, search domains (cluster-internal names).
 * - Otherwise the agent's own DNS client (c-ares via dns.promises.Resolver, using the nameservers the
 *   system is configured with) asks for A and AAAA at once. Names it cannot answer — `localhost`
 *   and other /etc/hosts entries, or a failing nameserver — fall back to getaddrinfo, whose error is
 *   reported when that fails too.
 */
export async function resolveHost(
  host: string,
  prefer: Family,
  useOsDnsResolver: boolean,
  signal: AbortSignal,
): Promise<{ addresses: ResolvedAddress[]; via: ResolvedVia }> {
  const literal = net.isIP(host);
  if (literal !== 0) return { addresses: [{ address: host, family: literal === 6 ? 6 : 4 }], via: 'literal' };
  if (useOsDnsResolver) {
    const list = await lookupAll(host, signal);
    return { addresses: orderByFamily(list, prefer), via: 'lookup' };
  }
  const resolver = new dns.promises.Resolver({ timeout: 2000, tries: 2 });
  const both = Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
  const [v4, v6] = await raceAbort(both, signal, () => resolver.cancel());
  const list: ResolvedAddress[] = [
    ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
    ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
  ];
  if (list.length > 0) return { addresses: orderByFamily(list, prefer), via: 'resolver' };
  const list2 = await lookupAll(host, signal);
  return { addresses: orderByFamily(list2, prefer), via: 'lookup' };
}

async function openTcp(a: ResolvedAddress, port: number, signal: AbortSignal): Promise<net.Socket> {
  const socket = net.connect({ host: a.address, port, family: a.family });
  try {
    // once() rejects on 'error' and on abort, and takes its listeners off either way.
    await once(socket, 'connect', { signal });
    return socket;
  } catch (err) {
    socket.destroy();
    throw signal.aborted ? signal.reason : err;
  }
}

/**
 * What the handshake offers in ALPN, as browsers do: h2 first, then HTTP/1.1. undici speaks h2 on a
 * socket whose server chose it (and loads its HTTP/2 half only then: src/agent/http/undici.ts).
 */
const ALPN_PROTOCOLS = ['h2', 'http/1.1'];

/** The HTTP version a connection speaks: '2' when its server chose h2 in ALPN, else '1.1'. */
export type HttpVersion = '2' | '1.1';

async function handshake(
  raw: net.Socket,
  host: string,
  signal: AbortSignal,
  material?: CheckTlsMaterial,
): Promise<tls.TLSSocket> {
  // Verification is decided by the caller after reading the certificate (see connectOnce), so the
  // handshake itself never rejects a certificate. Node still computes `authorized` and
  // `authorizationError` (chain and host name). No session is passed: every handshake is full.
  let socket: tls.TLSSocket;
  try {
    socket = tls.connect({
      // The check's own CAs and client certificate, if any. Each hop has its own Client, so no pool is
      // shared with a check that has other material (request.ts hopClient).
      ...tlsOptionsOf(material),
      socket: raw,
      host,
      servername: net.isIP(host) === 0 ? host : undefined,
      rejectUnauthorized: false,
      ALPNProtocols: ALPN_PROTOCOLS,
    });
  } catch (err) {
    // Material that cannot make a secure context (a key that does not fit its certificate) throws here.
    raw.destroy();
    throw err;
  }
  try {
    await once(socket, 'secureConnect', { signal });
    return socket;
  } catch (err) {
    socket.destroy();
    raw.destroy();
    throw signal.aborted ? signal.reason : err;
  }
}

export interface ConnectorOptions {
  ipFamily: 'IPv4' | 'IPv6';
  useOsDnsResolver: boolean;
  skipSSL: boolean;
  /** The run's signal (timeout or cancel). */
  signal: AbortSignal;
  /** Timestamps of the current hop, filled in as the steps complete. */
  hop: HopMarks;
  /** Observers of progress, for error messages and the result's details. */
  onPhase(phase: RequestPhase): void;
  onAddress(address: ResolvedAddress, via: ResolvedVia): void;
  onTls(details: ApiTlsDetails | null): void;
  /** The HTTP version the connection will speak, once it is open. */
  onHttpVersion?(version: HttpVersion): void;
  /** Name resolution; resolveHost unless a test substitutes it. */
  resolve?: typeof resolveHost;
  /** The check's own TLS material (client certificate, extra CAs), if any. */
  tls?: CheckTlsMaterial;
}

/** DNS, TCP and (for https) TLS for one connection; timestamps go into `o.hop`. */
export async function connectOnce(
  hostname: string,
  port: number,
  secure: boolean,
  o: ConnectorOptions,
): Promise<net.Socket> {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  o.hop.socket = performance.now();
  o.onPhase('dns');
  const { addresses, via } = await (o.resolve ?? resolveHost)(
    host,
    o.ipFamily === 'IPv6' ? 6 : 4,
    o.useOsDnsResolver,
    o.signal,
  );
  // An IP literal took no DNS time; the await above still cost a microtask, which is not DNS.
  o.hop.lookup = via === 'literal' ? o.hop.socket : performance.now();
  if (addresses.length === 0) {
    throw Object.assign(new Error(`no address for ${host}`), { code: 'NO_ADDRESS' });
  }
  o.onPhase('connect');
  let raw: net.Socket | undefined;
  let lastError: unknown;
  for (const a of addresses) {
    o.onAddress(a, via);
    try {
      raw = await openTcp(a, port, o.signal);
      break;
    } catch (err) {
      lastError = err;
      const code = (err as { code?: unknown }).code;
      // The next address (eventually of the other family) is tried only when this one cannot be
      // reached from here at all. A refused connection or a timeout is an answer about the target
      // and is reported, not papered over by the other family.
      if (o.signal.aborted || typeof code !== 'string' || !isNoRouteCode(code)) throw err;
    }
  }
  if (!raw) throw lastError;
  o.hop.connect = performance.now();
  if (!secure) {
    o.onHttpVersion?.('1.1');
    return raw;
  }
  o.onPhase('tls');
  const socket = await handshake(raw, host, o.signal, o.tls);
  o.hop.secureConnect = performance.now();
  const details = describeCertificate(socket);
  o.onTls(details);
  if (!socket.authorized && !o.skipSSL) {
    socket.destroy();
    throw tlsVerificationError(String(socket.authorizationError ?? 'UNKNOWN'));
  }
  o.onHttpVersion?.(socket.alpnProtocol === 'h2' ? '2' : '1.1');
  return socket;
}

/** An undici `connect` function over connectOnce; the phase moves to 'response' once connected. */
export function createConnector(o: ConnectorOptions): buildConnector.connector {
  return (opts, callback) => {
    const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
    connectOnce(opts.hostname, port, opts.protocol === 'https:', o).then(
      (socket) => {
        o.onPhase('response');
        callback(null, socket);
      },
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), null),
    );
  };
}
