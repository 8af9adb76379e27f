/**
 * A console session for tests of the result pages: signs in through the real sign-in form as the
 * tenant's account (its API key from its API headers) and hands back the cookies, for a browser
 * context or a Cookie header.
 */
import { signedInClient } from './console-client.ts';

interface KeyedAccount {
  accountId: string;
  headers: Record<string, string>;
}

function apiKeyOf(account: KeyedAccount): string {
  const key = /^Bearer (\S+)$/.exec(account.headers.authorization ?? '')?.[1];
  if (!key) throw new Error(`no API key in the headers of account ${account.accountId}`);
  return key;
}

/** The session's cookies as a browser context takes them. */
export async function consoleSessionCookies(
  serviceUrl: string,
  account: KeyedAccount,
): Promise<{ name: string; value: string; url: string }[]> {
  const client = await signedInClient(serviceUrl, {
    accountId: account.accountId,
    apiKey: apiKeyOf(account),
    headers: account.headers,
  });
  return [...client.cookies].map(([name, value]) => ({ name, value, url: `${serviceUrl}/app` }));
}

/** The session's cookies as one Cookie header, for fetch. */
export async function consoleCookieHeader(serviceUrl: string, account: KeyedAccount): Promise<string> {
  return (await consoleSessionCookies(serviceUrl, account)).map((c) => `${c.name}=${c.value}`).join('; ');
}
