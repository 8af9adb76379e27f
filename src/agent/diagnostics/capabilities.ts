/** What this agent process may do on the network, read from the kernel rather than guessed from the uid. */
import { readFileSync } from 'node:fs';

const CAP_NET_RAW = 13n;

/** Whether CAP_NET_RAW is in this process's effective set (/proc/self/status CapEff). */
export function hasNetRaw(statusText?: string): boolean {
  let text = statusText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/status', 'utf8');
    } catch {
      return false;
    }
  }
  const hex = /^CapEff:\s*([0-9a-f]+)$/im.exec(text)?.[1];
  if (!hex) return false;
  return ((BigInt(`0x${hex}`) >> CAP_NET_RAW) & 1n) === 1n;
}
