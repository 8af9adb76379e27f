/**
 * For the console result page's browser tests: the service with artifact uploads and results made as
 * an agent makes them, and a page's CSP violations as Chromium reports them.
 */
import type { Page } from 'playwright-core';
import { type ArtifactServiceHarness, startArtifactService } from './artifact-service.ts';

/** The whole service (console included) with an agent's artifact uploads and results at hand. */
export function startResultPages(): Promise<ArtifactServiceHarness> {
  return startArtifactService({});
}

/** The URL of a result's console page. */
export function resultPageUrl(h: ArtifactServiceHarness, checkId: string, resultId: string): string {
  return `${h.url}/app/checks/${checkId}/results/${resultId}`;
}

/** Collects the page's CSP violations from now on (Chromium reports each on the console). */
export function cspViolations(page: Page): string[] {
  const seen: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && m.text().includes('Content Security Policy')) seen.push(m.text());
  });
  return seen;
}
