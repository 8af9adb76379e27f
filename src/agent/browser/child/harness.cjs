'use strict';
/**
 * The agent's side of a browser or multistep run inside the sandbox (../engine.ts explains the two
 * ways a script runs). The sandbox's bootstrap runs `require(<this file>).run(options)` as its one
 * step, with the check's variables and the browser settings already in process.env.
 *
 * - `test`: a `@playwright/test` script. The Playwright Test CLI of the job's runtime runs it with
 *   the generated config (trace, video and screenshot on, the system Chromium); its JSON report is
 *   what the agent reads.
 * - `script`: a plain script. It runs here, in this process, as the body of an async function with
 *   `page`, `context`, `browser` and `request` in scope (launched only when the script names them),
 *   and any Chromium it launches itself is traced and recorded the same way.
 *
 * Plain CommonJS without types: it runs on the runtime's Node (22 or 24).
 */
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const { spawn } = require('node:child_process');
const { createRequire } = require('node:module');
const { patchChromium, PageRecorder, saveSecrets } = require('./instrument.cjs');

async function run(opts) {
  if (opts.engine === 'test') return runTests(opts);
  return runScript(opts);
}

/** The Playwright Test CLI as a child of the sandbox; its output is the check's log. */
function runTests(opts) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [opts.cliPath, 'test', `--config=${opts.configPath}`], {
      cwd: opts.jobDir,
      env: process.env,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.on('error', (err) => resolve({ exitCode: null, spawnError: String(err?.message) }));
    child.on('exit', (code, signal) => resolve({ exitCode: code, signal }));
  });
}

function describe(err) {
  if (!err || typeof err !== 'object')
    return { name: 'Error', message: `a non-error value was thrown: ${String(err)}`, stack: null };
  return {
    name: String(err.name || 'Error'),
    message: String(err.message),
    stack: typeof err.stack === 'string' ? err.stack : null,
  };
}

/** Resolves with `fallback` if `p` takes longer than `ms` (finishing steps must not hang the run). */
function bounded(p, ms, fallback) {
  let timer;
  return Promise.race([
    Promise.resolve(p).catch(() => fallback),
    new Promise((r) => {
      timer = setTimeout(() => r(fallback), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

async function runScript(opts) {
  // What is left for finishing steps: never past opts.finishBy, when the agent stops the sandbox.
  const left = (ms) => Math.max(0, Math.min(ms, opts.finishBy - Date.now()));
  const jobDir = opts.jobDir;
  const outDir = path.join(jobDir, '.outpost');
  const dirs = {
    traces: path.join(outDir, 'artifacts', 'traces'),
    videos: path.join(outDir, 'artifacts', 'videos'),
    screenshots: path.join(outDir, 'artifacts', 'screenshots'),
  };
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
  const file = path.join(jobDir, 'script.js');
  const userRequire = createRequire(file);
  const result = { engine: 'script', ok: false, error: null, timedOut: false, agentError: null };
  const writeResult = () => fs.writeFileSync(path.join(outDir, 'result.json'), JSON.stringify(result));

  let fn;
  try {
    fn = new vm.Script(
      `(async function (require, page, context, browser, request, module, exports, __filename, __dirname) {\n${opts.code}\n})`,
      {
        filename: file,
        lineOffset: -1,
      },
    ).runInThisContext();
  } catch (err) {
    result.error = describe(err);
    writeResult();
    return result;
  }

  const pw = userRequire('playwright-core');
  const recorder = new PageRecorder(outDir);
  const contexts = new Set();
  const browsers = new Set();
  let traces = 0;

  const closeContext = async (ctx) => {
    if (ctx.__outpostClosing) return ctx.__outpostClosing;
    ctx.__outpostClosing = (async () => {
      traces += 1;
      await bounded(ctx.tracing.stop({ path: path.join(dirs.traces, `trace-${traces}.zip`) }), left(15_000));
      await recorder.finish(ctx.pages(), left(1000));
      // Closing the context is what writes its videos.
      await bounded(ctx.__outpostClose(), left(15_000));
    })();
    return ctx.__outpostClosing;
  };
  const onBrowser = (browser) => {
    browsers.add(browser);
    const newContext = browser.newContext.bind(browser);
    browser.newContext = async (options) => {
      const ctx = await newContext({ recordVideo: { dir: dirs.videos }, ...(options || {}) });
      await ctx.tracing.start({ screenshots: true, snapshots: true, sources: false }).catch(() => {});
      contexts.add(ctx);
      recorder.context(ctx);
      ctx.__outpostClose = ctx.close.bind(ctx);
      ctx.close = () => closeContext(ctx);
      return ctx;
    };
    browser.newPage = async (options) => {
      const ctx = await browser.newContext(options);
      return ctx.newPage();
    };
    const close = browser.close.bind(browser);
    browser.close = async (options) => {
      await Promise.all([...contexts].filter((c) => c.browser() === browser).map(closeContext));
      return close(options);
    };
  };
  patchChromium(pw.chromium, onBrowser);

  // Only what the script names is started: a script that launches its own browser, or an API-only
  // multistep script, pays for no browser it does not use.
  // String literals and comments do not count ("Home page" names no page).
  const bare = opts.code
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/(^|[^:])\/\/.*$/gm, '$1')
    .replace(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g, "''");
  const names = (re) => re.test(bare);
  let browser;
  let context;
  let page;
  let request;
  try {
    if (names(/\b(page|context|browser)\b/)) {
      browser = await pw.chromium.launch();
      context = await browser.newContext();
      page = await context.newPage();
    }
    if (names(/\brequest\b/)) request = await pw.request.newContext();
  } catch (err) {
    result.agentError = `the browser could not be started: ${describe(err).message}`;
    await Promise.all([...browsers].map((b) => bounded(b.close(), 5000)));
    writeResult();
    return result;
  }

  // Errors that escape the script (a throw in a callback, an unhandled rejection) fail the run
  // here rather than ending the bootstrap's step.
  const saved = {
    uncaughtException: process.listeners('uncaughtException'),
    unhandledRejection: process.listeners('unhandledRejection'),
  };
  let escaped;
  const escapedRun = new Promise((_, reject) => {
    escaped = reject;
  });
  escapedRun.catch(() => {});
  for (const ev of Object.keys(saved)) {
    process.removeAllListeners(ev);
    process.on(ev, (err) => escaped(err));
  }
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(
      () => {
        const err = new Error(`the script did not finish within its time limit of ${opts.softLimitMs} ms`);
        err.name = 'TimeoutError';
        result.timedOut = true;
        reject(err);
      },
      Math.max(0, opts.deadlineAt - Date.now()),
    );
  });
  const mod = { exports: {} };
  try {
    await Promise.race([
      Promise.resolve().then(() => fn(userRequire, page, context, browser, request, mod, mod.exports, file, jobDir)),
      deadline,
      escapedRun,
    ]);
    result.ok = true;
  } catch (err) {
    result.error = describe(err);
  } finally {
    clearTimeout(timer);
  }

  if (!result.ok) {
    let n = 0;
    for (const ctx of contexts) {
      for (const p of ctx.pages()) {
        if (p.isClosed()) continue;
        n += 1;
        await bounded(
          p.screenshot({ path: path.join(dirs.screenshots, `failure-${n}.png`), timeout: Math.max(1, left(3000) / 2) }),
          left(3000) / 2,
        );
      }
    }
  }
  await Promise.all([...contexts].map(closeContext));
  if (request) await bounded(request.dispose(), left(5000));
  await Promise.all([...browsers].map((b) => bounded(b.close(), left(10_000))));
  for (const [ev, listeners] of Object.entries(saved)) {
    process.removeAllListeners(ev);
    for (const l of listeners) process.on(ev, l);
  }
  recorder.save();
  saveSecrets(outDir);
  writeResult();
  return result;
}

module.exports = { run };
