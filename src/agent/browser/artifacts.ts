/**
 * What a browser or multistep run left in its job folder for the user: screenshots, videos, traces
 * (Playwright's test-results, the harness's folders and images the script saved itself) and the
 * JSON report, scrubbed and handed to the run's artifact collector (src/agent/artifacts/).
 */
import type { Dirent } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ArtifactKind, ArtifactNote, ArtifactRef } from '../../shared/artifacts.ts';
import type { ArtifactSpec, RunArtifacts } from '../artifacts/uploader.ts';
import type { Scrubber } from '../scrub/scrubber.ts';
import { REPORT_FILE, type ScriptEngine } from './script-files.ts';
import { scrubTraceZip } from './trace-scrub.ts';

/** What a browser run needs of the run's artifact collector (CheckContext.artifacts, src/agent/artifacts/). */
export type RunArtifactSink = Pick<RunArtifacts, 'add' | 'note' | 'details'>;

/** Folders of the job folder that hold the runtime's and Chromium's own files, never the user's. */
function skipped(name: string, atTop: boolean): boolean {
  if (
    name === 'node_modules' ||
    name === 'ms-playwright' ||
    name.startsWith('playwright') ||
    name.startsWith('.org.chromium')
  )
    return true;
  return atTop && (name === '.cache' || name === '.config' || name === '.local' || name === '.pki');
}

/** Files under `dir` (recursively, not following links), with `.outpost/ms-playwright` and node_modules left out. */
export async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string, depth: number): Promise<void> => {
    if (depth > 6) return;
    let entries: Dirent[];
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        if (!skipped(e.name, d === dir)) await walk(p, depth + 1);
      } else if (e.isFile()) out.push(p);
    }
  };
  await walk(dir, 0);
  return out;
}

function kindOf(file: string): { kind: ArtifactKind; contentType: string } | null {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.png') return { kind: 'screenshot', contentType: 'image/png' };
  if (ext === '.jpg' || ext === '.jpeg') return { kind: 'screenshot', contentType: 'image/jpeg' };
  if (ext === '.webm') return { kind: 'video', contentType: 'video/webm' };
  if (ext === '.zip' && path.basename(file).startsWith('trace'))
    return { kind: 'trace', contentType: 'application/zip' };
  return null;
}

export interface Collected {
  names: string[];
  screenshots: string[];
  videos: string[];
  traces: string[];
  report: string | null;
  details: { artifacts?: ArtifactRef[]; artifactNotes?: ArtifactNote[] };
}

/** One file to hand over, and the list of the result its name goes into once it is accepted. */
interface Item {
  spec: ArtifactSpec;
  list: string[] | null;
}

/** Scrubs a trace in place; false when it is not a readable zip (cut short), so it must not leave the agent. */
async function traceScrubbed(file: string, scrubber: Scrubber): Promise<boolean> {
  try {
    await scrubTraceZip(file, scrubber);
    return true;
  } catch {
    return false;
  }
}

/** The screenshots, videos and traces worth handing over, named by kind; an unscrubbable trace becomes a note. */
async function mediaItems(jobDir: string, scrubber: Scrubber, out: Collected, note: (n: ArtifactNote) => void) {
  const files = (await listFiles(jobDir)).filter((f) => kindOf(f) !== null).sort();
  const counters: Record<string, number> = {};
  const items: Item[] = [];
  for (const file of files) {
    const k = kindOf(file) as { kind: ArtifactKind; contentType: string };
    if ((await stat(file)).size === 0) continue;
    counters[k.kind] = (counters[k.kind] ?? 0) + 1;
    const ext = path.extname(file).toLowerCase();
    const name = `${k.kind}-${counters[k.kind]}${ext}`;
    if (k.kind === 'trace' && !(await traceScrubbed(file, scrubber))) {
      note({
        name,
        kind: k.kind,
        message:
          'not uploaded: the trace is incomplete (the browser or the run ended while Playwright wrote it), so it could not be scrubbed',
      });
      continue;
    }
    const list = k.kind === 'screenshot' ? out.screenshots : k.kind === 'video' ? out.videos : out.traces;
    items.push({ spec: { name, kind: k.kind, path: file, contentType: k.contentType }, list });
  }
  return items;
}

/** The `@playwright/test` JSON report, scrubbed in place, or null when the run wrote none. */
async function reportItem(jobDir: string, scrubber: Scrubber): Promise<Item | null> {
  const report = path.join(jobDir, REPORT_FILE);
  try {
    // Text: scrubbed here with the job's secrets (the uploader's own pass knows only the agent's).
    await writeFile(report, scrubber.scrubText(await readFile(report, 'utf8')));
  } catch {
    return null;
  }
  return { spec: { name: 'report.json', kind: 'report', path: report, contentType: 'application/json' }, list: null };
}

/** Screenshots, videos, traces and the JSON report of a run, scrubbed and handed to the collector. */
export async function collectArtifacts(
  jobDir: string,
  engine: ScriptEngine,
  scrubber: Scrubber,
  ctx: { artifacts?: RunArtifactSink },
): Promise<Collected> {
  const sink = ctx.artifacts;
  const out: Collected = { names: [], screenshots: [], videos: [], traces: [], report: null, details: {} };
  const notes: ArtifactNote[] = [];
  const items = await mediaItems(jobDir, scrubber, out, (n) => (sink ? sink.note(n) : notes.push(n)));
  const report = engine === 'test' ? await reportItem(jobDir, scrubber) : null;
  if (report) {
    items.push(report);
    out.report = 'report.json';
  }
  for (const { spec, list } of items) {
    if (!sink) {
      notes.push({
        name: spec.name,
        kind: spec.kind,
        message: 'not uploaded: this agent runs without an artifact uploader',
      });
      continue;
    }
    const added = await sink.add(spec);
    if (!added.ok) continue;
    out.names.push(spec.name);
    list?.push(spec.name);
  }
  // With a collector the daemon puts its references (details.artifacts) into the result.
  out.details = sink ? {} : { artifactNotes: notes };
  return out;
}
