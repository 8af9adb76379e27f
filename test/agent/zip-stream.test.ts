/**
 * The zips the agent writes are streamed: a suite's HTML report folder comes out as one zip of its
 * files, and zipping a large artifact leaves the event loop free to run timers between the chunks
 * it writes (a zip built in one synchronous call would write everything within one turn).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { streamZip } from '../../src/agent/artifacts/zip-stream.ts';
import { collectSuiteArtifacts } from '../../src/agent/suites/artifacts.ts';
import { SuiteLog } from '../../src/agent/suites/log.ts';
import { KeepingSink, zipText } from './browser-fixtures.ts';

const MiB = 1024 * 1024;
let dir: string;

beforeEach(() => {
  dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'outpost-zip-stream-')));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it("zips a suite's HTML report folder into one artifact", async () => {
  const job = path.join(dir, 'job');
  const report = path.join(job, 'playwright-report');
  mkdirSync(path.join(report, 'data'), { recursive: true });
  mkdirSync(path.join(job, '.agent'));
  writeFileSync(path.join(report, 'index.html'), '<html>report</html>');
  writeFileSync(path.join(report, 'data', 'a.json'), '{"a":1}');
  const sink = new KeepingSink(path.join(dir, 'kept'));

  const got = await collectSuiteArtifacts({
    collector: sink,
    log: new SuiteLog(64 * 1024),
    jobDir: job,
    agentDir: path.join(job, '.agent'),
    jsonReport: path.join(job, 'missing.json'),
    htmlReport: report,
    attachments: [],
  });

  expect(got.htmlReport).toBe('playwright-report.zip');
  const { names, text } = await zipText(sink.file('playwright-report.zip'));
  expect(names.sort()).toEqual(['data/a.json', 'index.html']);
  expect(text).toContain('<html>report</html>');
  expect(text).toContain('{"a":1}');
});

it('zips a large artifact while the event loop keeps turning', async () => {
  const big = path.join(dir, 'video.webm');
  const block = randomBytes(64 * 1024);
  writeFileSync(big, Buffer.concat(Array.from({ length: 512 }, () => block)));
  const total = 32 * MiB;

  // A callback that runs once per turn of the event loop, counting the turns.
  let turns = 0;
  let counting = true;
  const turn = () => {
    turns += 1;
    if (counting) setImmediate(turn);
  };
  setImmediate(turn);
  // Bytes of zip written in each turn.
  const bytesByTurn = new Map<number, number>();
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      bytesByTurn.set(turns, (bytesByTurn.get(turns) ?? 0) + chunk.length);
      done();
    },
  });

  await streamZip(sink, (zip) => zip.addFile(big, 'video.webm'));
  counting = false;

  const written = [...bytesByTurn.values()].reduce((a, b) => a + b, 0);
  expect(written).toBeGreaterThan(total / 2);
  // The zip came out over many turns, no turn writing the bulk of it.
  expect(bytesByTurn.size).toBeGreaterThan(1);
  expect(Math.max(...bytesByTurn.values())).toBeLessThan(written / 2);
});
