/**
 * The DNS check runner against a real dnsmasq on 127.0.0.1 serving a zone this file writes, plus a
 * UDP socket that never answers (timeout) and a closed port (refused).
 */
import dgram from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstNameServer } from '../../src/agent/checks/dns/system-resolver.ts';
import type { DnsAssertion, DnsCheckDefinition, DnsRequest } from '../../src/shared/checks/types.ts';
import { dnsCheck as dnsCheckOf, runDnsCheck } from '../support/dns-check.ts';
import { type DnsmasqServer, freePort, startDnsmasq } from './dns-server.ts';

/** Six TXT strings of 200 bytes: well over 512 bytes, so a UDP answer without EDNS is truncated. */
const BIG_TXT = Array.from({ length: 6 }, (_, i) => String(i).repeat(200));

let server: DnsmasqServer;
beforeAll(async () => {
  server = await startDnsmasq([
    'local=/example.test/',
    'auth-zone=example.test,192.0.2.0/24,2001:db8::/32',
    'auth-server=ns1.example.test,127.0.0.1',
    'auth-soa=2024010101,hostmaster.example.test,1200,120,604800',
    'host-record=www.example.test,192.0.2.10,2001:db8::10',
    'host-record=ns1.example.test,127.0.0.1',
    'cname=alias.example.test,www.example.test',
    'mx-host=example.test,mail.example.test,10',
    'txt-record=example.test,"v=spf1 -all"',
    'srv-host=_sip._tcp.example.test,sip.example.test,5060,10,20',
    'caa-record=example.test,0,issue,letsencrypt.org',
    // HTTPS (type 65): priority 1, target ".", alpn=h2, as raw RDATA.
    'dns-rr=svc.example.test,65,00010000010003026832',
    ...BIG_TXT.map((t) => `txt-record=big.example.test,${t}`),
  ]);
});
afterAll(async () => {
  await server?.stop();
});

/** A check asking dnsmasq here, unless `request` names another port. */
const dnsCheck = (
  request: Partial<DnsRequest> & Pick<DnsRequest, 'query' | 'recordType'>,
  extra: Partial<DnsCheckDefinition> = {},
) => dnsCheckOf({ port: server.port, ...request }, extra);

const run = runDnsCheck;

const a = (
  source: DnsAssertion['source'],
  comparison: DnsAssertion['comparison'],
  target: string,
  property = '',
): DnsAssertion => ({
  source,
  comparison,
  property,
  target,
  regex: null,
});

describe('DNS check runner against dnsmasq', () => {
  it.each([
    ['www.example.test', 'A', 'A', '192.0.2.10'],
    ['www.example.test', 'AAAA', 'AAAA', '2001:db8::10'],
    ['alias.example.test', 'CNAME', 'CNAME', 'www.example.test.'],
    ['example.test', 'MX', 'MX', '10 mail.example.test.'],
    ['example.test', 'TXT', 'TXT', 'v=spf1 -all'],
    ['example.test', 'SOA', 'SOA', 'ns1.example.test. hostmaster.example.test. 2024010101 1200 120 604800 600'],
    ['example.test', 'NS', 'NS', 'ns1.example.test.'],
    ['svc.example.test', 'HTTPS', 'HTTPS', '\\# 10 00010000010003026832'],
    ['192.0.2.10', 'PTR', 'PTR', 'www.example.test.'],
    ['_sip._tcp.example.test', 'SRV', 'SRV', '10 20 5060 sip.example.test.'],
    ['example.test', 'CAA', 'CAA', '0 issue "letsencrypt.org"'],
  ] as const)('answers %s %s with the record in presentation form', async (query, recordType, type, data) => {
    const { outcome, response } = await run(
      dnsCheck({ query, recordType, assertions: [a('RESPONSE_CODE', 'EQUALS', 'NOERROR')] }),
    );
    expect(outcome.error).toBeNull();
    expect(outcome.hasFailures).toBe(false);
    expect(response?.rcode).toBe('NOERROR');
    expect(response?.answers).toContainEqual({
      name: expect.stringMatching(/\.$/),
      type,
      ttl: expect.any(Number),
      data,
    });
    expect(response).toMatchObject({
      protocol: 'UDP',
      fellBackToTcp: false,
      server: { address: '127.0.0.1', port: server.port },
    });
  });

  it('reports NXDOMAIN for a name the zone lacks, and a RESPONSE_CODE assertion decides', async () => {
    const pass = await run(
      dnsCheck({ query: 'nope.example.test', recordType: 'A', assertions: [a('RESPONSE_CODE', 'EQUALS', 'NXDOMAIN')] }),
    );
    expect(pass.response?.rcode).toBe('NXDOMAIN');
    expect(pass.outcome.hasFailures).toBe(false);
    const fail = await run(
      dnsCheck({ query: 'nope.example.test', recordType: 'A', assertions: [a('RESPONSE_CODE', 'EQUALS', 'NOERROR')] }),
    );
    expect(fail.outcome.hasFailures).toBe(true);
    expect(fail.outcome.error).toBe('Assertion failed: RESPONSE_CODE EQUALS "NOERROR" (actual: "NXDOMAIN")');
  });

  it('reports REFUSED for a name it has no server for', async () => {
    const { response, outcome } = await run(
      dnsCheck({
        query: 'elsewhere.invalid',
        recordType: 'A',
        assertions: [a('RESPONSE_CODE', 'NOT_EQUALS', 'NOERROR')],
      }),
    );
    expect(response?.rcode).toBe('REFUSED');
    expect(outcome.hasFailures).toBe(false);
  });

  it('asks over TCP when the check says so', async () => {
    const { response, outcome } = await run(dnsCheck({ query: 'www.example.test', recordType: 'A', protocol: 'TCP' }));
    expect(outcome.error).toBeNull();
    expect(response).toMatchObject({ protocol: 'TCP', fellBackToTcp: false, answers: [{ data: '192.0.2.10' }] });
  });

  it('retries a truncated UDP answer over TCP and gets every record', async () => {
    const { response, outcome } = await run(dnsCheck({ query: 'big.example.test', recordType: 'TXT' }));
    expect(outcome.error).toBeNull();
    expect(response).toMatchObject({ protocol: 'TCP', fellBackToTcp: true, flags: { truncated: false } });
    expect(response?.answers.map((r) => r.data).sort()).toEqual([...BIG_TXT].sort());
    expect(response?.textAnswer.split('\n')).toHaveLength(6);
  });

  it('evaluates TEXT_ANSWER, JSON_ANSWER and RESPONSE_TIME assertions, with regex', async () => {
    const { result, outcome } = await run(
      dnsCheck({
        query: 'example.test',
        recordType: 'MX',
        assertions: [
          a('TEXT_ANSWER', 'CONTAINS', 'IN\tMX\t10 mail.example.test.'),
          a('JSON_ANSWER', 'EQUALS', '10 mail.example.test.', '$.answers[0].data'),
          a('JSON_ANSWER', 'HAS_KEY', 'authoritative', '$.flags'),
          a('JSON_ANSWER', 'EQUALS', 'MX', 'answers[0].type'),
          { ...a('TEXT_ANSWER', 'EQUALS', '10'), regex: 'MX\\t(\\d+)' },
          a('RESPONSE_TIME', 'LESS_THAN', '1000'),
          a('JSON_ANSWER', 'IS_NULL', '', '$.answers[5]'),
        ],
      }),
    );
    expect(result.assertions.map((x) => [x.source, x.passed, x.error ?? null])).toEqual([
      ['TEXT_ANSWER', true, null],
      ['JSON_ANSWER', true, null],
      ['JSON_ANSWER', true, null],
      ['JSON_ANSWER', true, null],
      ['TEXT_ANSWER', true, null],
      ['RESPONSE_TIME', true, null],
      ['JSON_ANSWER', true, null],
    ]);
    expect(result.assertions[4]?.actual).toBe('10');
    expect(outcome.hasFailures).toBe(false);
  });

  it('fails a TEXT_ANSWER assertion that does not hold, naming the actual answer', async () => {
    const { outcome } = await run(
      dnsCheck({
        query: 'www.example.test',
        recordType: 'A',
        assertions: [a('TEXT_ANSWER', 'CONTAINS', '192.0.2.99')],
      }),
    );
    expect(outcome.hasFailures).toBe(true);
    expect(outcome.error).toMatch(
      /^Assertion failed: TEXT_ANSWER CONTAINS "192.0.2.99" \(actual: "www.example.test.\\t600\\tIN\\tA\\t192.0.2.10"\)$/,
    );
  });

  it('marks a slow answer degraded (an answer later than the maximum is not waited for: see below)', async () => {
    const degraded = await run(
      dnsCheck({ query: 'www.example.test', recordType: 'A' }, { degradedResponseTime: 0.001, maxResponseTime: 1000 }),
    );
    expect([degraded.outcome.isDegraded, degraded.outcome.hasFailures]).toEqual([true, false]);
  });

  it('times out on a name server that never answers', async () => {
    const silent = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    let received = 0;
    silent.on('message', () => {
      received += 1;
    });
    try {
      const { port } = silent.address();
      const { outcome, response } = await run(dnsCheck({ query: 'www.example.test', recordType: 'A', port }), 300);
      expect(response).toBeNull();
      expect(outcome.hasFailures).toBe(true);
      expect(outcome.error).toBe(`Timed out after 300 ms waiting for an answer from 127.0.0.1:${port} over UDP`);
      expect(received).toBe(1);
    } finally {
      silent.close();
    }
  });

  it("stops at the check's maxResponseTime on a silent server, not at the run's time limit", async () => {
    const silent = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    const arrived = new Promise<void>((resolve) => silent.once('message', () => resolve()));
    try {
      const { port } = silent.address();
      const t = performance.now();
      const { outcome } = await run(
        dnsCheck({ query: 'www.example.test', recordType: 'A', port }, { maxResponseTime: 600 }),
        30_000,
      );
      await arrived;
      expect(performance.now() - t).toBeLessThan(600 + 400);
      expect(outcome.hasFailures).toBe(true);
      expect(outcome.error).toBe(
        `No answer from 127.0.0.1:${port} over UDP within the check's maxResponseTime (600 ms)`,
      );
      // The time went into the query, the phase that was running.
      const phases = outcome.details?.timingPhases as { dns: number; query: number; total: number };
      expect(phases.query).toBeGreaterThanOrEqual(600 - phases.dns - 5);
      expect(phases.total).toBeGreaterThanOrEqual(595);
    } finally {
      silent.close();
    }
  });

  it('says the connection was refused by a closed port (UDP and TCP)', async () => {
    const port = await freePort();
    for (const protocol of ['UDP', 'TCP'] as const) {
      const { outcome } = await run(dnsCheck({ query: 'www.example.test', recordType: 'A', port, protocol }));
      expect(outcome.error).toBe(`Connection refused by 127.0.0.1:${port} (${protocol})`);
    }
  });

  it('fails on an error return code without a RESPONSE_CODE assertion, as the reference does', async () => {
    const { response, outcome } = await run(dnsCheck({ query: 'nope.example.test', recordType: 'A' }));
    expect(response?.rcode).toBe('NXDOMAIN');
    expect([outcome.hasFailures, outcome.error]).toEqual([
      true,
      'DNS answer NXDOMAIN: an error return code fails the check unless a RESPONSE_CODE assertion expects it',
    ]);
  });

  it('shouldFail excuses an error return code and nothing else: a good answer passes, a failed assertion fails', async () => {
    const excused = await run(dnsCheck({ query: 'nope.example.test', recordType: 'A' }, { shouldFail: true }));
    expect([excused.outcome.hasFailures, excused.outcome.error]).toEqual([false, null]);
    expect(excused.outcome.details?.shouldFail).toEqual({ excused: expect.stringMatching(/^DNS answer NXDOMAIN/) });
    const good = await run(dnsCheck({ query: 'www.example.test', recordType: 'A' }, { shouldFail: true }));
    expect([good.outcome.hasFailures, good.outcome.error]).toEqual([false, null]);
    const asserted = await run(
      dnsCheck(
        { query: 'nope.example.test', recordType: 'A', assertions: [a('RESPONSE_CODE', 'EQUALS', 'NOERROR')] },
        { shouldFail: true },
      ),
    );
    expect([asserted.outcome.hasFailures, asserted.outcome.error]).toEqual([
      true,
      'Assertion failed: RESPONSE_CODE EQUALS "NOERROR" (actual: "NXDOMAIN")',
    ]);
  });
});

describe('system resolver', () => {
  it('takes the first nameserver line of resolv.conf', () => {
    expect(firstNameServer('# c\nsearch x\nnameserver 10.0.0.2\nnameserver 10.0.0.3\n')).toBe('10.0.0.2');
    expect(firstNameServer('nameserver fe80::1%eth0\n')).toBe('fe80::1%eth0');
    expect(firstNameServer('nameserver bogus\noptions ndots:5\n')).toBeNull();
  });
});
