/**
 * The config the agent hands `playwright test`: a small module written beside the user's
 * playwright.config (so every path in it resolves as before) that imports it and changes only what
 * the agent must own:
 *  - `launchOptions.executablePath` = the system Chromium (CHROMIUM_PATH) for every Chromium project
 *    (top-level `use` and each project's), and no `channel`: Playwright honours no environment
 *    variable for this, and nothing may download a browser (PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1);
 *  - the reporters: list (the log), json and html into the run's output folder;
 *  - `outputDir` (traces, videos, screenshots) into the run's output folder;
 *  - `globalTimeout`: what is left of the suite's global timeout after the install.
 * Firefox and WebKit projects are left as they are (and fail: the agent carries no such browser).
 */
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface WrapperOptions {
  /** The folder of the user's config; the wrapper is written there. */
  projectDir: string;
  /** The user's config file name (playwright.config.ts, ...). */
  configFile: string;
  chromiumPath: string;
  jsonReport: string;
  htmlReport: string;
  outputDir: string;
  globalTimeoutMs: number;
}

// TypeScript, so Playwright's own loader compiles it to whatever module kind the project uses
// (CommonJS or ESM) and can import a .ts, .js, .mjs or .cjs config alike.
export const WRAPPER_CONFIG_NAME = 'outpost.playwright.config.ts';

export function wrapperConfigSource(o: WrapperOptions): string {
  const j = (v: unknown) => JSON.stringify(v);
  return `// Written by the Outpost agent for this run (docs/suites.md): your config, with the system
// Chromium, the agent's reporters, output folder and global timeout.
import * as loaded from ${j(`./${o.configFile}`)};

const pick = (m) => (m && typeof m === 'object' && 'default' in m ? m.default : m);
let user = pick(loaded);
user = pick(user) ?? {};
const executablePath = ${j(o.chromiumPath)};
const isChromium = (use, parent) =>
  (use?.browserName ?? parent?.browserName ?? use?.defaultBrowserType ?? parent?.defaultBrowserType ?? 'chromium') === 'chromium';
const withChromium = (use, parent) => {
  if (!isChromium(use, parent)) return use;
  const { channel: _channel, ...rest } = use ?? {};
  return { ...rest, launchOptions: { ...(use?.launchOptions ?? {}), executablePath } };
};
const projects = Array.isArray(user.projects)
  ? user.projects.map((p) => {
      const { outputDir: _outputDir, ...rest } = p ?? {};
      return { ...rest, use: withChromium(p?.use, user.use) };
    })
  : undefined;

export default {
  ...user,
  use: withChromium(user.use, undefined),
  ...(projects ? { projects } : {}),
  outputDir: ${j(o.outputDir)},
  globalTimeout: ${Math.max(1, Math.floor(o.globalTimeoutMs))},
  reporter: [['list'], ['json', { outputFile: ${j(o.jsonReport)} }], ['html', { outputFolder: ${j(o.htmlReport)}, open: 'never' }]],
};
`;
}

export async function writeWrapperConfig(o: WrapperOptions): Promise<string> {
  const file = path.join(o.projectDir, WRAPPER_CONFIG_NAME);
  // The install may have left a file or a link of that name: a new file, never written through a link.
  await rm(file, { force: true, recursive: true });
  await writeFile(file, wrapperConfigSource(o), { mode: 0o644, flag: 'wx' });
  return file;
}
