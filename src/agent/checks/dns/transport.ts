/**
 * One DNS query to one server over UDP or TCP (RFC 1035 4.2), with dns-packet building and parsing
 * the messages. Without EDNS in the query (the check's `edns`/`dnssecOk`) a UDP answer is at most 512
 * bytes and a larger one comes back truncated (TC), which the caller then asks again over TCP.
 *
 * UDP answers whose id does not match are ignored, as are datagrams from another address (the
 * socket is connected to the server), so a stray or spoofed packet cannot pass for the answer.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket, { type DecodedPacket, type Packet } from 'dns-packet';

export interface DnsServer {
  address: string;
  port: number;
  family: 4 | 6;
}

/** A server that answered with something that is not a DNS message for our query. */
export class DnsProtocolError extends Error {
  override readonly name = 'DnsProtocolError';
  readonly code = 'DNS_BAD_ANSWER';
}

function decodeAnswer(buf: Buffer, id: number): DecodedPacket | null {
  let packet: DecodedPacket;
  try {
    packet = dnsPacket.decode(buf);
  } catch (err) {
    throw new DnsProtocolError(
      `the answer is not a valid DNS message (${err instanceof Error ? err.message : String(err)})`,
    );
  }
  return packet.id === id && packet.type === 'response' ? packet : null;
}

/** Settles once: resolves or rejects, runs `close`, and detaches from the signal. */
function settleOnce<T>(signal: AbortSignal, close: () => void) {
  let done = false;
  let resolveP!: (v: T) => void;
  let rejectP!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolveP = res;
    rejectP = rej;
  });
  const onAbort = (): void => fail(signal.reason);
  function finish(): boolean {
    if (done) return false;
    done = true;
    signal.removeEventListener('abort', onAbort);
    close();
    return true;
  }
  function ok(v: T): void {
    if (finish()) resolveP(v);
  }
  function fail(e: unknown): void {
    if (finish()) rejectP(e);
  }
  if (signal.aborted) queueMicrotask(onAbort);
  else signal.addEventListener('abort', onAbort, { once: true });
  return { promise, ok, fail };
}

export function queryUdp(
  server: DnsServer,
  query: Packet & { id: number },
  signal: AbortSignal,
): Promise<DecodedPacket> {
  const socket = dgram.createSocket(server.family === 6 ? 'udp6' : 'udp4');
  const s = settleOnce<DecodedPacket>(signal, () => socket.close());
  socket.on('error', (err) => s.fail(err));
  socket.on('message', (msg) => {
    try {
      const answer = decodeAnswer(msg, query.id);
      if (answer) s.ok(answer);
    } catch (err) {
      s.fail(err);
    }
  });
  // Connected, so that an ICMP port-unreachable surfaces as ECONNREFUSED instead of silence.
  socket.connect(server.port, server.address, () => {
    socket.send(dnsPacket.encode(query), (err) => {
      if (err) s.fail(err);
    });
  });
  return s.promise;
}

export function queryTcp(
  server: DnsServer,
  query: Packet & { id: number },
  signal: AbortSignal,
): Promise<DecodedPacket> {
  const socket = net.connect({ host: server.address, port: server.port, family: server.family });
  const s = settleOnce<DecodedPacket>(signal, () => socket.destroy());
  let buffered = Buffer.alloc(0);
  socket.on('error', (err) => s.fail(err));
  socket.on('connect', () => socket.write(dnsPacket.streamEncode(query)));
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    // Each message is preceded by its length in two bytes.
    while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
      const length = buffered.readUInt16BE(0);
      const message = buffered.subarray(2, 2 + length);
      buffered = buffered.subarray(2 + length);
      try {
        const answer = decodeAnswer(message, query.id);
        if (answer) return s.ok(answer);
      } catch (err) {
        return s.fail(err);
      }
    }
  });
  socket.on('end', () =>
    s.fail(
      Object.assign(new Error('the server closed the TCP connection before answering'), { code: 'DNS_TCP_CLOSED' }),
    ),
  );
  return s.promise;
}
