/**
 * A suite run's artifacts: the JSON report, the HTML report (its folder zipped into one file, as a
 * stream), and what Playwright attached to test results (traces, videos, screenshots). They go to
 * the run's artifact collector when the daemon provides one (src/agent/artifacts/); without one the
 * result still names them and the log says they were not uploaded.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ArtifactKind } from '../../shared/artifacts.ts';
import type { ArtifactAddResult, ArtifactSpec } from '../artifacts/uploader.ts';
import { writeZipFile } from '../artifacts/zip-stream.ts';
import type { SuiteLog } from './log.ts';
import { insideJob } from './suite-uid.ts';

/** What a runner needs of RunArtifacts (src/agent/artifacts/uploader.ts). */
export interface ArtifactCollector {
  add(spec: ArtifactSpec): Promise<ArtifactAddResult>;
}

export interface CollectedArtifacts {
  names: string[];
  traces: Array<{ name: string; filename: string }>;
  videos: string[];
  jsonReport: string | null;
  htmlReport: string | null;
}

/** An HTML report larger than this is left out (the traces are uploaded on their own). */
const HTML_ZIP_MAX_BYTES = 150 * 1024 * 1024;

const safe = (s: string) =>
  s
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 120) || 'file';

async function folderFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])) {
    if (e.isFile()) out.push(path.join(e.parentPath, e.name));
  }
  return out;
}

async function zipFolder(dir: string, target: string): Promise<boolean> {
  const files = await folderFiles(dir);
  if (files.length === 0) return false;
  let total = 0;
  for (const f of files) total += (await stat(f)).size;
  if (total > HTML_ZIP_MAX_BYTES) return false;
  await writeZipFile(target, (zip) => {
    for (const f of files) zip.addFile(f, path.relative(dir, f));
  });
  return true;
}

function kindOf(contentType: string, name: string): ArtifactKind {
  if (name === 'trace' || contentType === 'application/zip') return 'trace';
  if (contentType.startsWith('video/')) return 'video';
  if (contentType.startsWith('image/')) return 'screenshot';
  return 'other';
}

export async function collectSuiteArtifacts(o: {
  collector: ArtifactCollector | undefined;
  log: SuiteLog;
  /** The job folder: only files inside it are taken (the run's code wrote the report and its paths). */
  jobDir: string;
  /** A folder of the agent's own in the job folder, for the zipped HTML report. */
  agentDir: string;
  jsonReport: string;
  htmlReport: string;
  attachments: Array<{ name: string; contentType: string; path: string }>;
}): Promise<CollectedArtifacts> {
  const got: CollectedArtifacts = { names: [], traces: [], videos: [], jsonReport: null, htmlReport: null };
  const pending: Array<{ spec: ArtifactSpec; onOk: (name: string) => void }> = [];
  // A file inside the job folder, links resolved: never one elsewhere that a link or a path in the report names.
  const fileInJob = async (p: string) => {
    const real = await insideJob(o.jobDir, p);
    return real && (await stat(real).catch(() => undefined))?.isFile() === true ? real : undefined;
  };

  const jsonReport = await fileInJob(o.jsonReport);
  if (jsonReport) {
    pending.push({
      spec: { name: 'playwright-report.json', kind: 'report', path: jsonReport, contentType: 'application/json' },
      onOk: (n) => (got.jsonReport = n),
    });
  }
  const htmlZip = path.join(o.agentDir, 'playwright-report.zip');
  const htmlDir = await insideJob(o.jobDir, o.htmlReport);
  if (htmlDir && (await zipFolder(htmlDir, htmlZip))) {
    pending.push({
      spec: { name: 'playwright-report.zip', kind: 'report', path: htmlZip, contentType: 'application/zip' },
      onOk: (n) => (got.htmlReport = n),
    });
  }
  const seen = new Set<string>();
  let i = 0;
  for (const a of o.attachments) {
    const real = await fileInJob(a.path);
    if (!real || seen.has(real)) continue;
    seen.add(real);
    i += 1;
    const kind = kindOf(a.contentType, a.name);
    const base = path.basename(a.path);
    const testFolder = path.basename(path.dirname(a.path));
    const name = `${String(i).padStart(3, '0')}-${safe(testFolder)}-${safe(base)}`.slice(0, 200);
    pending.push({
      spec: { name, kind, path: real, contentType: a.contentType },
      onOk: (n) => {
        if (kind === 'trace') got.traces.push({ name: n, filename: base });
        if (kind === 'video') got.videos.push(n);
      },
    });
  }
  if (!o.collector) {
    if (pending.length > 0)
      o.log.note(
        `${pending.length} artifact(s) (reports, traces, videos) were produced but this agent has no artifact uploader`,
      );
    return got;
  }
  for (const p of pending) {
    const r = await o.collector.add(p.spec);
    if (r.ok) {
      got.names.push(r.ref.name);
      p.onOk(r.ref.name);
    } else o.log.note(`artifact ${p.spec.name}: ${r.note.message}`);
  }
  return got;
}
