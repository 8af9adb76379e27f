/**
 * The operator console over plain HTTP, as a browser without script would use it: cookies kept by
 * hand, the CSRF token read from each form.
 */
import type { TestAccount } from './public-api.ts';

export interface ConsoleClient {
  /** name=value pairs sent as the Cookie header. */
  cookies: Map<string, string>;
  /** The Set-Cookie headers of the last response. */
  lastSetCookies: string[];
  get(path: string): Promise<Response>;
  /** POSTs a form; `csrf: false` leaves the token out. */
  post(path: string, fields: Record<string, string>, opts?: { csrf?: boolean }): Promise<Response>;
  /** The token of the last page fetched that had a form. */
  csrfToken: string;
}

const TOKEN = /name="_csrf" value="([^"]+)"/;

export function consoleClient(baseUrl: string): ConsoleClient {
  const client: ConsoleClient = {
    cookies: new Map(),
    lastSetCookies: [],
    csrfToken: '',
    async get(path) {
      return remember(
        await fetch(`${baseUrl}${path}`, {
          headers: { accept: 'text/html', cookie: cookieHeader() },
          redirect: 'manual',
        }),
      );
    },
    async post(path, fields, opts = {}) {
      const body = new URLSearchParams({ ...fields, ...(opts.csrf === false ? {} : { _csrf: client.csrfToken }) });
      const headers = {
        accept: 'text/html',
        cookie: cookieHeader(),
        'content-type': 'application/x-www-form-urlencoded',
      };
      return remember(await fetch(`${baseUrl}${path}`, { method: 'POST', headers, body, redirect: 'manual' }));
    },
  };
  const cookieHeader = () => [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  async function remember(res: Response): Promise<Response> {
    client.lastSetCookies = res.headers.getSetCookie();
    for (const line of client.lastSetCookies) {
      const [pair] = line.split(';');
      const [name, value] = (pair ?? '').split('=');
      if (!name) continue;
      if (value === '' || /Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(line)) client.cookies.delete(name);
      else client.cookies.set(name, value ?? '');
    }
    const text = await res.clone().text();
    const token = TOKEN.exec(text)?.[1];
    if (token) client.csrfToken = token;
    return res;
  }
  return client;
}

/** Signs in as `account` through the sign-in form; throws unless it lands on the checks list. */
export async function signedInClient(baseUrl: string, account: TestAccount): Promise<ConsoleClient> {
  const client = consoleClient(baseUrl);
  await client.get('/app/sign-in');
  const res = await client.post('/app/sign-in', { accountId: account.accountId, apiKey: account.apiKey });
  if (res.status !== 303 || res.headers.get('location') !== '/app/checks')
    throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
  return client;
}
