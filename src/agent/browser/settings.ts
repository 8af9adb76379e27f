/**
 * How the agent runs browsers (README lists the variables). Read from the agent's environment when
 * the first browser or multistep check runs; a bad value is a ConfigError like any other setting.
 *
 * Nothing here downloads a browser: Chromium is the system's (Debian's `chromium` package, or
 * CHROMIUM_PATH), and Playwright's video encoder is the system's ffmpeg (FFMPEG_PATH).
 */
import { type Env, readInteger, readString } from '../../shared/env.ts';

export interface BrowserSettings {
  /** CHROMIUM_PATH: the Chromium binary every launch uses. */
  chromiumPath: string;
  /** FFMPEG_PATH: the ffmpeg Playwright records videos with. */
  ffmpegPath: string;
  /** BROWSER_MEMORY_MB: resident memory of a browser run's whole process tree (Node, Chromium). */
  memoryMb: number;
  /** Chromium's own sandbox needs user namespaces that a root process inside a container lacks. */
  noSandbox: boolean;
  /** Flags every Chromium gets (docs/checks.md "Browser and multistep checks"). */
  args: string[];
}

/**
 * Quiet, headless, nothing phoning home: no GPU, no background networking or component updates,
 * no first-run or sync. Playwright adds the user-data-dir itself, inside the job folder (TMPDIR).
 */
export const CHROMIUM_ARGS = [
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export function loadBrowserSettings(env: Env = process.env): BrowserSettings {
  return {
    chromiumPath: readString(env, 'CHROMIUM_PATH', '/usr/bin/chromium'),
    ffmpegPath: readString(env, 'FFMPEG_PATH', '/usr/bin/ffmpeg'),
    // Summed over Chromium's processes, resident memory counts the pages they share once per
    // process, so the cap sits well above what a browser check really uses.
    memoryMb: readInteger(env, 'BROWSER_MEMORY_MB', 3072, { min: 256, max: 65_536 }),
    noSandbox: process.getuid?.() === 0,
    args: CHROMIUM_ARGS,
  };
}
