/**
 * README's opening list of what the agent runs must name exactly the check types the agent
 * registers runners for: a type added without the README (or the README promising one that is not
 * there) fails here.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { RUNNERS } from '../../src/agent/checks/index.ts';
import type { CheckType } from '../../src/shared/checks/types.ts';

/** How README names each check type. */
const README_NAMES: Partial<Record<CheckType, string>> = {
  API: 'API',
  TCP: 'TCP',
  DNS: 'DNS',
  ICMP: 'ICMP',
  BROWSER: 'browser',
  MULTI_STEP: 'multistep',
  PLAYWRIGHT: 'Playwright-suite',
  URL: 'URL',
  SSL: 'SSL',
};

/** The items of "runs A, B and C checks" and of "and D and E monitors", whitespace folded. */
function listedInReadme(): string[] {
  const text = readFileSync(new URL('../../README.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
  const match = /the service for jobs, runs (.+?) checks(?:,? and (.+?) monitors)? \(/.exec(text);
  expect(match, 'README names what the agent runs: "the service for jobs, runs … checks (…"').not.toBeNull();
  return [match?.[1], match?.[2]]
    .filter((part): part is string => part !== undefined)
    .flatMap((part) => part.split(/, | and /));
}

it("README's list of check types is the agent's runners", () => {
  const registered = [...RUNNERS.keys()].map((type) => README_NAMES[type] ?? `(no README name for ${type})`);
  expect(listedInReadme().sort()).toEqual(registered.sort());
});
