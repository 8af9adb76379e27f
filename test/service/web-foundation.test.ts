import { describe, expect, it } from 'vitest';
import { webServicePerFile } from '../helpers/web-service.ts';
import { underHost } from '../support/web-browser.ts';
import { COLOR_SCHEMES, chromiumPerFile, expectAccessible, withPage } from '../support/web-page-tests.ts';

describe('web foundation', () => {
  const t = webServicePerFile();
  const chromium = chromiumPerFile();

  it('answers an unknown page with the plain HTML 404 page, headers and all, and the API with JSON', async () => {
    const page = await fetch(`${t.web.url}/status/nobody-here`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await page.text()).toContain('There is no page at this address.');
    const api = await fetch(`${t.web.url}/v1/nothing`, { headers: { accept: 'text/html' } });
    expect(api.status).toBe(404);
    expect((await api.json()).statusCode).toBe(404);
  });

  it('serves the stylesheet by content hash, cacheable for a year', async () => {
    const res = await fetch(`${t.web.url}/assets/web.css`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toContain('immutable');
    expect(await res.text()).toContain('prefers-color-scheme');
  });

  it('sends an unknown custom domain to the 404 page, which axe finds accessible in both themes', async () => {
    for (const scheme of COLOR_SCHEMES) {
      await withPage(chromium.browser, scheme, async (page) => {
        const res = await page.goto(`${underHost(t.web.url, 'unknown.example.test')}/`);
        expect(res?.status()).toBe(404);
        await expectAccessible(page, `not-found-${scheme}`);
      });
    }
  });
});
