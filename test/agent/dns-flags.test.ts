/**
 * The DNS check's query switches (Outpost extensions: recursionDesired, edns, dnssecOk) and the flags
 * of the answer in the result. A small node:dgram DNS server written here records the header bits and
 * OPT record of every query it receives, exactly, and answers with the AD/RA bits a test picks; Debian's
 * dnsmasq on loopback shows EDNS doing its job on a real server (a large answer fits UDP with it).
 */
import dgram from 'node:dgram';
import dnsPacket, { type Answer, type DecodedPacket } from 'dns-packet';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EDNS_UDP_PAYLOAD_SIZE } from '../../src/agent/checks/dns.ts';
import type { DnsCheckDefinition, DnsRequest } from '../../src/shared/checks/types.ts';
import { dnsCheck as dnsCheckOf, runDnsCheck } from '../support/dns-check.ts';
import { type DnsmasqServer, startDnsmasq } from './dns-server.ts';

type Opt = Answer & { udpPayloadSize: number; flags: number; flag_do: boolean };

interface Recorder {
  port: number;
  queries: DecodedPacket[];
  /** Header flags the next answers carry besides QR (AD, RA, ...). */
  answerFlags: number;
  close(): Promise<void>;
}

/** Answers every A query with 192.0.2.1, echoing an OPT record (with DO when the query had it). */
async function startRecorder(): Promise<Recorder> {
  const socket = dgram.createSocket('udp4');
  const r: Recorder = {
    port: 0,
    queries: [],
    answerFlags: 0,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
  socket.on('message', (msg, from) => {
    const q = dnsPacket.decode(msg);
    r.queries.push(q);
    const opt = (q.additionals ?? []).find((a) => a.type === 'OPT') as Opt | undefined;
    const answer = dnsPacket.encode({
      type: 'response',
      id: q.id,
      // RD is copied from the query, as RFC 1035 4.1.1 says.
      flags: r.answerFlags | (q.flag_rd ? dnsPacket.RECURSION_DESIRED : 0),
      questions: q.questions,
      answers: [{ type: 'A', name: q.questions?.[0]?.name ?? '', ttl: 60, data: '192.0.2.1' }],
      ...(opt
        ? {
            additionals: [
              {
                type: 'OPT',
                name: '.',
                udpPayloadSize: 1232,
                flags: opt.flags & dnsPacket.DNSSEC_OK,
              } as unknown as Answer,
            ],
          }
        : {}),
    });
    socket.send(answer, from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  r.port = socket.address().port;
  return r;
}

/**
 * Four TXT strings of 200 bytes: over 512 bytes, so truncated over UDP unless the query has EDNS, and
 * under the 1232 bytes dnsmasq answers over UDP at most (its edns-packet-max default).
 */
const BIG_TXT = Array.from({ length: 4 }, (_, i) => String(i).repeat(200));

let recorder: Recorder;
let dnsmasq: DnsmasqServer;
beforeAll(async () => {
  recorder = await startRecorder();
  dnsmasq = await startDnsmasq([
    'local=/example.test/',
    'auth-zone=example.test',
    'auth-server=ns1.example.test,127.0.0.1',
    'host-record=www.example.test,192.0.2.10',
    ...BIG_TXT.map((t) => `txt-record=big.example.test,${t}`),
  ]);
});
afterAll(async () => {
  await Promise.all([recorder?.close(), dnsmasq?.stop()]);
});
beforeEach(() => {
  recorder.queries.length = 0;
  recorder.answerFlags = 0;
});

/** A check of www.example.test's A record at `port`. */
const dnsCheck = (port: number, request: Partial<DnsRequest> = {}) =>
  dnsCheckOf({ query: 'www.example.test', recordType: 'A', port, ...request }, { maxResponseTime: 2000 });

const run = (check: DnsCheckDefinition) => runDnsCheck(check);

const optOf = (q: DecodedPacket | undefined) => (q?.additionals ?? []).find((a) => a.type === 'OPT') as Opt | undefined;

describe('DNS query switches, as the server receives them', () => {
  it('asks with RD and without EDNS by default, and says so in the result', async () => {
    const { outcome, result } = await run(dnsCheck(recorder.port));
    expect(outcome.hasFailures).toBe(false);
    expect(recorder.queries).toHaveLength(1);
    expect(recorder.queries[0]?.flag_rd).toBe(true);
    expect(optOf(recorder.queries[0])).toBeUndefined();
    expect(result.request).toMatchObject({ recursionDesired: true, edns: false, dnssecOk: false });
    expect(result.response?.edns).toBeNull();
  });

  it('clears RD when recursionDesired is false', async () => {
    const { result } = await run(dnsCheck(recorder.port, { recursionDesired: false }));
    expect(recorder.queries[0]?.flag_rd).toBe(false);
    expect(result.request.recursionDesired).toBe(false);
    expect(result.response?.flags.recursionDesired).toBe(false);
  });

  it('sends an OPT record without DO for edns, with DO for dnssecOk', async () => {
    await run(dnsCheck(recorder.port, { edns: true }));
    await run(dnsCheck(recorder.port, { dnssecOk: true }));
    const [plainEdns, withDo] = recorder.queries.map(optOf);
    expect(plainEdns).toMatchObject({ name: '.', udpPayloadSize: EDNS_UDP_PAYLOAD_SIZE, flag_do: false });
    expect(withDo).toMatchObject({ udpPayloadSize: EDNS_UDP_PAYLOAD_SIZE, flag_do: true });
  });

  it('records the AD and RA bits and the OPT record of the answer, for assertions too', async () => {
    recorder.answerFlags = dnsPacket.AUTHENTIC_DATA | dnsPacket.RECURSION_AVAILABLE;
    const { outcome, result } = await run(
      dnsCheck(recorder.port, {
        dnssecOk: true,
        assertions: [
          {
            source: 'JSON_ANSWER',
            comparison: 'EQUALS',
            property: '$.flags.authenticData',
            target: 'true',
            regex: null,
          },
        ],
      }),
    );
    expect(outcome.hasFailures).toBe(false);
    expect(result.request).toMatchObject({ edns: true, dnssecOk: true });
    expect(result.response?.flags).toMatchObject({
      authenticData: true,
      recursionAvailable: true,
      checkingDisabled: false,
    });
    expect(result.response?.edns).toEqual({ udpPayloadSize: 1232, version: 0, dnssecOk: true });
  });

  it('records AD as false when the server does not vouch for the answer', async () => {
    const { result } = await run(dnsCheck(recorder.port));
    expect(result.response?.flags).toMatchObject({ authenticData: false, recursionAvailable: false });
  });
});

describe('EDNS against dnsmasq', () => {
  it('without EDNS a large answer is truncated over UDP and asked again over TCP', async () => {
    const { result } = await run(dnsCheck(dnsmasq.port, { query: 'big.example.test', recordType: 'TXT' }));
    expect(result.response).toMatchObject({ protocol: 'TCP', fellBackToTcp: true });
    expect(result.response?.answers).toHaveLength(4);
  });

  it('with EDNS the same answer fits UDP, and the server answers with its own OPT record', async () => {
    const { result } = await run(dnsCheck(dnsmasq.port, { query: 'big.example.test', recordType: 'TXT', edns: true }));
    expect(result.response).toMatchObject({ protocol: 'UDP', fellBackToTcp: false });
    expect(result.response?.answers).toHaveLength(4);
    expect(result.response?.edns).toMatchObject({ version: 0, udpPayloadSize: expect.any(Number) });
  });

  it('answers from its zone with RD off, and reports its RA bit', async () => {
    const { outcome, result } = await run(dnsCheck(dnsmasq.port, { recursionDesired: false }));
    expect(outcome.hasFailures).toBe(false);
    expect(result.response?.answers[0]?.data).toBe('192.0.2.10');
    expect(result.response?.flags.recursionDesired).toBe(false);
    expect(typeof result.response?.flags.recursionAvailable).toBe('boolean');
  });
});
