/**
 * Decides whether an outbound call may connect to an address: not when the address is in a blocked
 * range (./ranges.ts), unless OUTBOUND_ALLOW allows the address or the host name the call asked for.
 */
import { BlockList, isIPv6 } from 'node:net';
import { OUTBOUND_ALLOW, type OutboundConfig } from './config.ts';
import { addRange, blockedKind } from './ranges.ts';

/** A connection refused by policy before it was made. Final: retrying changes nothing unless DNS or OUTBOUND_ALLOW does. */
export class OutboundRefusedError extends Error {
  override readonly name = 'OutboundRefusedError';
  readonly code = 'E_OUTBOUND_REFUSED';
  readonly address: string;
  constructor(hostname: string, address: string, kind: string) {
    const what = hostname === address ? `${address} is` : `${hostname} resolved to ${address},`;
    super(`refused: ${what} ${kind} address; allow it with ${OUTBOUND_ALLOW}`);
    this.address = address;
  }
}

export class OutboundPolicy {
  readonly #allowed = new BlockList();
  readonly #hosts: Set<string>;
  readonly #domains: string[];

  constructor(config: OutboundConfig) {
    for (const range of config.allowRanges) addRange(this.#allowed, range);
    this.#hosts = new Set(config.allowHosts.filter((h) => !h.startsWith('*.')));
    this.#domains = config.allowHosts.filter((h) => h.startsWith('*.')).map((h) => h.slice(1));
  }

  /** Why connecting to `address` for a call to `hostname` is refused; undefined when it is not. */
  refusal(hostname: string, address: string): OutboundRefusedError | undefined {
    const kind = blockedKind(address);
    if (kind === undefined || this.#allows(hostname, address)) return undefined;
    return new OutboundRefusedError(hostname, address, kind);
  }

  #allows(hostname: string, address: string): boolean {
    const name = hostname.toLowerCase().replace(/\.$/, '');
    if (this.#hosts.has(name) || this.#domains.some((d) => name.endsWith(d))) return true;
    return this.#allowed.check(address, isIPv6(address) ? 'ipv6' : 'ipv4');
  }
}
