/**
 * The Playwright "browsers" folder a suite runs with (PLAYWRIGHT_BROWSERS_PATH), one per Playwright
 * version, kept across runs on the agent (PLAYWRIGHT_BROWSERS_CACHE_DIR).
 *
 * Nothing is downloaded into it. Chromium is the system's (the wrapper config sets its executable), and
 * the one other binary Playwright needs, the ffmpeg it records videos with, is linked to the system's
 * (FFMPEG_PATH) under the name and revision that version of Playwright looks for. Without it a suite
 * with `video: 'on'` fails with "Executable doesn't exist at …/ffmpeg-linux". The folder is made once
 * per Playwright version and reused by every later run of that version.
 */
import { mkdir, readFile, rename, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { agentFolder, insideJob } from './suite-uid.ts';

/**
 * playwright-core's version and ffmpeg revision, as the project installed it; undefined if not found
 * or if its files lie outside the job folder (the agent reads them, and the install wrote them).
 */
async function playwrightCoreOf(
  cliPath: string,
  jobDir: string,
): Promise<{ version: string; ffmpegRevision: string | null } | undefined> {
  try {
    // Resolved from the CLI the run uses, so pnpm's nested layout and hoisted ones both work.
    const pkgPath = await insideJob(jobDir, createRequire(cliPath).resolve('playwright-core/package.json'));
    if (!pkgPath) return undefined;
    const { version } = JSON.parse(await readFile(pkgPath, 'utf8')) as { version: string };
    const browsers = JSON.parse(await readFile(path.join(path.dirname(pkgPath), 'browsers.json'), 'utf8')) as {
      browsers?: Array<{ name?: string; revision?: string }>;
    };
    return { version, ffmpegRevision: browsers.browsers?.find((b) => b.name === 'ffmpeg')?.revision ?? null };
  } catch {
    return undefined;
  }
}

/**
 * The folder for the Playwright that `cliPath` belongs to, created on first use. Returns undefined
 * when the project's Playwright cannot be identified (the run then goes on without the variable).
 */
export async function playwrightBrowsersFolder(o: {
  cliPath: string;
  cacheDir: string;
  ffmpegPath: string;
  jobDir: string;
}): Promise<string | undefined> {
  const core = await playwrightCoreOf(o.cliPath, o.jobDir);
  if (!core || !/^[\w.+-]+$/.test(core.version)) return undefined;
  // The agent's, readable by every run's uid and writable by none: no run can change what a later one
  // (of another check) runs, such as the ffmpeg link.
  await agentFolder(o.cacheDir, 'PLAYWRIGHT_BROWSERS_CACHE_DIR', 0o755);
  const folder = path.join(o.cacheDir, core.version);
  if (core.ffmpegRevision && /^\d+$/.test(core.ffmpegRevision)) {
    const dir = path.join(folder, `ffmpeg-${core.ffmpegRevision}`);
    const link = path.join(dir, 'ffmpeg-linux');
    await mkdir(dir, { recursive: true, mode: 0o755 });
    // Made beside it and renamed over: two runs preparing the same version at once both end well.
    const tmp = `${link}.${process.pid}.${Date.now()}`;
    await symlink(o.ffmpegPath, tmp);
    await rename(tmp, link);
  }
  return folder;
}
