/**
 * The secret fields of a channel's config (SECRET_CONFIG_FIELDS, and the values of the key/value
 * lists in SECRET_LIST_FIELDS): sealed with the store's SecretBox at rest, and masked in API
 * responses as `********` plus the last 4 characters (only when the value is long enough that 4
 * characters give nothing useful away), so a user can tell keys apart.
 */
import type { SecretBox } from '../secrets/box.ts';
import { isSealed } from '../secrets/box.ts';
import { type AlertChannelDefinition, SECRET_CONFIG_FIELDS, SECRET_LIST_FIELDS } from './channel-config.ts';

type KeyValue = { key: string; value: string };

const MASK = '********';
/** Below this length the mask shows nothing of the value. */
const SHOW_TAIL_FROM = 16;

export function maskSecret(value: string): string {
  return value.length >= SHOW_TAIL_FROM ? `${MASK}${value.slice(-4)}` : MASK;
}

function mapSecrets(def: AlertChannelDefinition, fn: (value: string) => string): AlertChannelDefinition {
  const config: Record<string, unknown> = { ...def.config };
  for (const field of SECRET_CONFIG_FIELDS[def.type]) {
    const value = config[field];
    if (typeof value === 'string') config[field] = fn(value);
  }
  for (const field of SECRET_LIST_FIELDS[def.type]) {
    const list = config[field];
    if (Array.isArray(list)) config[field] = (list as KeyValue[]).map((item) => ({ ...item, value: fn(item.value) }));
  }
  return { ...def, config } as AlertChannelDefinition;
}

export function sealChannelSecrets(box: SecretBox, def: AlertChannelDefinition): AlertChannelDefinition {
  return mapSecrets(def, (v) => box.seal(v));
}

export function openChannelSecrets(box: SecretBox, def: AlertChannelDefinition): AlertChannelDefinition {
  return mapSecrets(def, (v) => (isSealed(v) ? box.open(v) : v));
}

export function maskChannelSecrets(def: AlertChannelDefinition): AlertChannelDefinition {
  return mapSecrets(def, maskSecret);
}

/**
 * An update that sends back a secret field as GET showed it (masked) means "unchanged": keep the
 * stored value, so reading a channel and writing it back never replaces a key with its mask.
 */
export function keepMaskedSecrets(
  incoming: AlertChannelDefinition,
  stored: AlertChannelDefinition,
): AlertChannelDefinition {
  if (incoming.type !== stored.type) return incoming;
  const kept: Record<string, unknown> = { ...incoming.config };
  const old = stored.config as Record<string, unknown>;
  for (const field of SECRET_CONFIG_FIELDS[incoming.type]) {
    const before = old[field];
    if (typeof before === 'string' && kept[field] === maskSecret(before)) kept[field] = before;
  }
  for (const field of SECRET_LIST_FIELDS[incoming.type]) {
    if (Array.isArray(kept[field]))
      kept[field] = keepMaskedItems(kept[field] as KeyValue[], (old[field] ?? []) as KeyValue[]);
  }
  return { ...incoming, config: kept } as AlertChannelDefinition;
}

/** An item sent back with the mask of the stored value under the same key keeps the stored value. */
function keepMaskedItems(incoming: readonly KeyValue[], stored: readonly KeyValue[]): KeyValue[] {
  return incoming.map((item) => {
    const before = stored.find((s) => s.key === item.key && maskSecret(s.value) === item.value);
    return before ? { ...item, value: before.value } : item;
  });
}
