/**
 * For the console result page's browser tests: the service with the result section behind the
 * stand-in guard (artifact uploads and results made as an agent makes them), and a page's CSP
 * violations as Chromium reports them.
 */
import type { Page } from 'playwright-core';
import { consoleResultSection } from '../../src/service/web/console/result-page.ts';
import { type ArtifactServiceHarness, startArtifactService } from './artifact-service.ts';
import { behindTestGuard, TEST_CSRF_TOKEN } from './console-guard.ts';

export function startResultPages(): Promise<ArtifactServiceHarness> {
  return startArtifactService({}, { beforeStart: behindTestGuard(consoleResultSection(() => TEST_CSRF_TOKEN)) });
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
