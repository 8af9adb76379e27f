/**
 * The name server a DNS check asks when it names none: the system's configured resolver, i.e. the
 * first `nameserver` line of /etc/resolv.conf (as a program using the C library would ask first),
 * at port 53. Without one, 127.0.0.1 as the C library's default. The file is read again at most
 * every RESOLV_CONF_TTL_MS, so an edit (a container's DNS changing) is picked up without a restart.
 */
import { readFile } from 'node:fs/promises';
import net from 'node:net';

export const RESOLV_CONF_PATH = '/etc/resolv.conf';
export const RESOLV_CONF_TTL_MS = 10_000;

/** The first nameserver in resolv.conf text, or null (a scope like `%eth0` is kept for link-local). */
export function firstNameServer(text: string): string | null {
  for (const line of text.split('\n')) {
    const m = /^\s*nameserver\s+(\S+)/.exec(line);
    const address = m?.[1];
    if (address && net.isIP(address.split('%')[0] ?? '') !== 0) return address;
  }
  return null;
}

let cached: { at: number; address: string } | null = null;

export async function systemNameServer(path: string = RESOLV_CONF_PATH): Promise<string> {
  const now = Date.now();
  if (cached && path === RESOLV_CONF_PATH && now - cached.at < RESOLV_CONF_TTL_MS) return cached.address;
  let address = '127.0.0.1';
  try {
    address = firstNameServer(await readFile(path, 'utf8')) ?? address;
  } catch {
    // No resolv.conf: the C library's default applies.
  }
  if (path === RESOLV_CONF_PATH) cached = { at: now, address };
  return address;
}
