/**
 * DNS checks against blackbox_exporter's dns module: an A query for www.example.test over UDP to
 * dnsmasq on 127.0.0.1 (authoritative for a zone the benchmark writes), NOERROR expected on both sides.
 *
 *   npm run bench -- dns [--concurrency 64] [--duration 10]
 */
import { startDnsmasq } from '../../test/agent/dns-server.ts';
import { dnsCheck } from '../../test/support/dns-check.ts';
import { compare, startBlackbox } from './_blackbox.ts';
import { numberFlags } from './_stats.ts';
import { requireTools, TOOLS } from './_tools.ts';

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const opts = numberFlags(args, { concurrency: 64, duration: 10 });
  requireTools(TOOLS.dnsmasq, TOOLS.blackbox, TOOLS.wrk);
  const dnsmasq = await startDnsmasq([
    'local=/example.test/',
    'auth-zone=example.test,192.0.2.0/24',
    'auth-server=ns1.example.test,127.0.0.1',
    'host-record=www.example.test,192.0.2.10',
    'host-record=ns1.example.test,127.0.0.1',
    // A busy benchmark: no query log, a cache as large as dnsmasq allows.
    'cache-size=10000',
  ]);
  const blackbox = await startBlackbox({ queryName: 'www.example.test', queryType: 'A' });
  // The tests' DNS check (UDP to 127.0.0.1), asserting NOERROR.
  const check = dnsCheck(
    {
      query: 'www.example.test',
      recordType: 'A',
      port: dnsmasq.port,
      assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', property: '', target: 'NOERROR' }],
    },
    { id: 'bench', accountId: 'bench', name: 'bench' },
  );
  try {
    return await compare({
      ...opts,
      workload: `A www.example.test over UDP to dnsmasq 127.0.0.1:${dnsmasq.port}, NOERROR asserted`,
      checkType: 'DNS',
      check,
      blackbox,
      module: 'dns',
      target: `127.0.0.1:${dnsmasq.port}`,
      ratioTarget: 1.0,
    });
  } finally {
    await blackbox.stop();
    await dnsmasq.stop();
  }
}
