/**
 * The secret fields of a channel's config (SECRET_CONFIG_FIELDS): sealed with the store's SecretBox
 * at rest, and masked in API responses as `********` plus the last 4 characters (only when the
 * value is long enough that 4 characters give nothing useful away), so a user can tell keys apart.
 */
import type { SecretBox } from '../secrets/box.ts';
import { isSealed } from '../secrets/box.ts';
import { type AlertChannelDefinition, SECRET_CONFIG_FIELDS } from './channel-config.ts';

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
export function keepMaskedSecrets(incoming: AlertChannelDefinition, stored: AlertChannelDefinition): AlertChannelDefinition {
  if (incoming.type !== stored.type) return incoming;
  const kept: Record<string, unknown> = { ...incoming.config };
  const old = stored.config as Record<string, unknown>;
  for (const field of SECRET_CONFIG_FIELDS[incoming.type]) {
    const before = old[field];
    if (typeof before === 'string' && kept[field] === maskSecret(before)) kept[field] = before;
  }
  return { ...incoming, config: kept } as AlertChannelDefinition;
}
