/**
 * The HTTP client side of the outbound guard: an undici dispatcher for every call the service makes
 * to an address a user supplied (subscriber webhooks today). The check is on the address actually
 * connected to: a host name is resolved once, inside the connection, and only permitted addresses
 * are handed to connect, so a name that answers differently a moment later (DNS rebinding) gains
 * nothing. Each new connection (every attempt, every redirect hop) passes the check again.
 */
import { type LookupAddress, lookup as dnsLookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector, type Dispatcher, interceptors } from 'undici';
import type { OutboundPolicy } from './policy.ts';

/** Resolves a name to all its addresses (dns.lookup's signature with `all: true`). */
export type Resolver = (
  hostname: string,
  options: { all: true; family?: number | string; hints?: number },
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export interface OutboundDispatcherOptions {
  /** Longest a connection (including the lookup) may take. */
  connectTimeoutMs: number;
  /** Redirects to follow per request (each hop is checked); 0 follows none. */
  maxRedirections?: number;
  /** The name resolver; dns.lookup (the system's resolver, /etc/hosts included) unless a test gives one. */
  resolve?: Resolver;
}

export function createOutboundDispatcher(policy: OutboundPolicy, opts: OutboundDispatcherOptions): Dispatcher {
  const connect = guardedConnector(
    policy,
    buildConnector({ timeout: opts.connectTimeoutMs, lookup: guardedLookup(policy, opts.resolve) }),
  );
  const agent = new Agent({ connect });
  return opts.maxRedirections ? agent.compose(interceptors.redirect({ maxRedirections: opts.maxRedirections })) : agent;
}

/** Refuses an IP address in the URL itself: net.connect does not look those up, so the lookup never sees them. */
function guardedConnector(policy: OutboundPolicy, connect: buildConnector.connector): buildConnector.connector {
  return (options, callback) => {
    const literal = options.hostname.replace(/^\[(.*)\]$/, '$1');
    const refusal = isIP(literal) === 0 ? undefined : policy.refusal(literal, literal);
    if (refusal) {
      callback(refusal, null);
      return;
    }
    connect(options, callback);
  };
}

/** A net.connect lookup that hands on only the addresses the policy permits, and refuses when none is left. */
function guardedLookup(policy: OutboundPolicy, resolve: Resolver = dnsLookup as Resolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) {
        callback(err, '', 0);
        return;
      }
      const permitted = addresses.filter((a) => !policy.refusal(hostname, a.address));
      const first = permitted[0];
      if (!first) {
        const refused = addresses[0];
        const error = refused
          ? policy.refusal(hostname, refused.address)
          : new Error(`${hostname} resolved to no address`);
        callback(error as NodeJS.ErrnoException, '', 0);
      } else if (options.all) {
        callback(null, permitted);
      } else {
        callback(null, first.address, first.family);
      }
    });
  };
}
