/**
 * What a subscription's address may be, shared by the API (`config`) and the page's form: an email
 * address, or an http(s) webhook URL. Each returns the normalized address, or undefined when the
 * value is not one; the caller words the error for its own field.
 */
const EMAIL_PATTERN = /^[^\s@<>,;"]+@[^\s@<>,;"]+$/;

export const EMAIL_MAX_LENGTH = 254;
export const WEBHOOK_URL_MAX_LENGTH = 2048;

export function parseEmailAddress(value: string): string | undefined {
  const address = value.trim();
  return address.length <= EMAIL_MAX_LENGTH && EMAIL_PATTERN.test(address) ? address : undefined;
}

export function parseWebhookUrl(value: string): URL | undefined {
  if (value.trim().length > WEBHOOK_URL_MAX_LENGTH) return undefined;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return undefined;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
}
