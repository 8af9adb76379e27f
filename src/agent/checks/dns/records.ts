/**
 * DNS records in presentation form, as `dig` prints them, for results and TEXT_ANSWER. dns-packet
 * parses the wire format; this only turns its objects into text.
 *
 * - Names are fully qualified with a trailing dot (`mail.example.test.`).
 * - `data` of a TXT record is its strings joined as they are (what an SPF or verification record
 *   means); the text answer quotes each string as dig does.
 * - A record type dns-packet cannot parse (HTTPS among them) is shown in the generic form of
 *   RFC 3597: `\# <length> <hex>`.
 */
import type { Answer } from 'dns-packet';
import type { DnsAnswerRecord, DnsRecordType } from '../../../shared/checks/types.ts';

/** dns-packet's name for a type it has no constant for is UNKNOWN_<n>; HTTPS is 65. */
const WIRE_TYPES: Partial<Record<DnsRecordType, string>> = { HTTPS: 'UNKNOWN_65' };

export function wireType(recordType: DnsRecordType): string {
  return WIRE_TYPES[recordType] ?? recordType;
}

function typeName(type: string): string {
  if (type === 'UNKNOWN_65') return 'HTTPS';
  return type.startsWith('UNKNOWN_') ? `TYPE${type.slice('UNKNOWN_'.length)}` : type;
}

export const fqdn = (name: string): string =>
  name === '' || name === '.' ? '.' : name.endsWith('.') ? name : `${name}.`;

function txtStrings(data: unknown): string[] {
  const parts = Array.isArray(data) ? data : [data];
  return parts.map((p) => (Buffer.isBuffer(p) ? p.toString('utf8') : String(p)));
}

const quote = (s: string): string => `"${s.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;

/** The record's data as text; `forText` quotes TXT strings as dig does. */
function presentData(type: string, data: unknown, forText: boolean): string {
  const d = data as Record<string, unknown>;
  switch (type) {
    case 'A':
    case 'AAAA':
      return String(data);
    case 'CNAME':
    case 'NS':
    case 'PTR':
    case 'DNAME':
      return fqdn(String(data));
    case 'MX':
      return `${String(d.preference)} ${fqdn(String(d.exchange))}`;
    case 'TXT': {
      const strings = txtStrings(data);
      return forText ? strings.map(quote).join(' ') : strings.join('');
    }
    case 'SOA':
      return `${fqdn(String(d.mname))} ${fqdn(String(d.rname))} ${String(d.serial)} ${String(d.refresh)} ${String(d.retry)} ${String(d.expire)} ${String(d.minimum)}`;
    case 'SRV':
      return `${String(d.priority ?? 0)} ${String(d.weight ?? 0)} ${String(d.port)} ${fqdn(String(d.target))}`;
    case 'CAA':
      return `${String(d.flags ?? 0)} ${String(d.tag)} ${quote(String(d.value))}`;
    default:
      if (Buffer.isBuffer(data))
        return `\\# ${data.length}${data.length > 0 ? ` ${data.toString('hex').toUpperCase()}` : ''}`;
      return JSON.stringify(data) ?? '';
  }
}

/** One record for the result; OPT pseudo-records (EDNS) are not records and give null. */
export function toRecord(a: Answer): DnsAnswerRecord | null {
  if (a.type === 'OPT') return null;
  return { name: fqdn(a.name), type: typeName(a.type), ttl: a.ttl ?? 0, data: presentData(a.type, a.data, false) };
}

/** The answer section as dig prints it: `name ttl IN type data`, one record a line. */
export function textAnswer(answers: readonly Answer[]): string {
  return answers
    .filter((a) => a.type !== 'OPT')
    .map(
      (a) =>
        `${fqdn(a.name)}\t${a.ttl ?? 0}\t${a.class ?? 'IN'}\t${typeName(a.type)}\t${presentData(a.type, a.data, true)}`,
    )
    .join('\n');
}

/** `10.0.0.1` → `1.0.0.10.in-addr.arpa`, `::1` → the ip6.arpa name, for PTR queries given an address. */
export function reverseName(ip: string, family: 4 | 6): string {
  if (family === 4) return `${ip.split('.').reverse().join('.')}.in-addr.arpa`;
  const [head = '', tail = ''] = ip.split('::');
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const h = groups(head);
  const t = groups(tail);
  const full = [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  const nibbles = full.map((g) => g.padStart(4, '0')).join('');
  return `${[...nibbles].reverse().join('.')}.ip6.arpa`;
}
