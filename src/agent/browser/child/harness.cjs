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

/** A plain script's run: what every phase below reads and fills in. */
function newScriptRun(opts) {
  const outDir = path.join(opts.jobDir, '.outpost');
  const file = path.join(opts.jobDir, 'script.js');
  const run = {
    opts,
    outDir,
    dirs: {
      traces: path.join(outDir, 'artifacts', 'traces'),
      videos: path.join(outDir, 'artifacts', 'videos'),
      screenshots: path.join(outDir, 'artifacts', 'screenshots'),
    },
    file,
    userRequire: createRequire(file),
    result: { engine: 'script', ok: false, error: null, timedOut: false, agentError: null },
    /** playwright-core of the job's runtime, once the script compiled. */
    pw: null,
    recorder: new PageRecorder(outDir),
    contexts: new Set(),
    browsers: new Set(),
    traces: 0,
  };
  for (const d of Object.values(run.dirs)) fs.mkdirSync(d, { recursive: true });
  return run;
}

/** What is left for finishing steps: never past opts.finishBy, when the agent stops the sandbox. */
function left(run, ms) {
  return Math.max(0, Math.min(ms, run.opts.finishBy - Date.now()));
}

/** A plain script, run here: compiled, given what it names, run to its deadline, then everything closed and saved. */
async function runScript(opts) {
  const run = newScriptRun(opts);
  const fn = compile(run);
  if (!fn) return finish(run, false);
  instrumentChromium(run, run.userRequire('playwright-core'));
  const given = await launchWhatTheScriptNames(run);
  if (!given) return finish(run, false);
  const trap = trapEscapes();
  await runWithinDeadline(run, fn, given, trap.escaped);
  if (!run.result.ok) await screenshotOpenPages(run);
  await closeEverything(run, given.request);
  trap.restore();
  return finish(run, true);
}

/** The script as the body of an async function; null (with the error in the result) if it does not parse. */
function compile(run) {
  try {
    return new vm.Script(
      `(async function (require, page, context, browser, request, module, exports, __filename, __dirname) {\n${run.opts.code}\n})`,
      {
        filename: run.file,
        lineOffset: -1,
      },
    ).runInThisContext();
  } catch (err) {
    run.result.error = describe(err);
    return null;
  }
}

/** Writes the result, with the pages and runtime secrets too when the script ran. */
function finish(run, ran) {
  if (ran) {
    run.recorder.save();
    saveSecrets(run.outDir);
  }
  fs.writeFileSync(path.join(run.outDir, 'result.json'), JSON.stringify(run.result));
  return run.result;
}

/** Stops a context's trace, records its pages and closes it, once however often it is asked. */
function closeContext(run, ctx) {
  if (ctx.__outpostClosing) return ctx.__outpostClosing;
  ctx.__outpostClosing = (async () => {
    run.traces += 1;
    await bounded(ctx.tracing.stop({ path: path.join(run.dirs.traces, `trace-${run.traces}.zip`) }), left(run, 15_000));
    await run.recorder.finish(ctx.pages(), left(run, 1000));
    // Closing the context is what writes its videos.
    await bounded(ctx.__outpostClose(), left(run, 15_000));
  })();
  return ctx.__outpostClosing;
}

/** Every context of the browser is traced, filmed and recorded, and closing the browser closes them first. */
function instrumentBrowser(run, browser) {
  run.browsers.add(browser);
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const ctx = await newContext({ recordVideo: { dir: run.dirs.videos }, ...(options || {}) });
    await ctx.tracing.start({ screenshots: true, snapshots: true, sources: false }).catch(() => {});
    run.contexts.add(ctx);
    run.recorder.context(ctx);
    ctx.__outpostClose = ctx.close.bind(ctx);
    ctx.close = () => closeContext(run, ctx);
    return ctx;
  };
  browser.newPage = async (options) => {
    const ctx = await browser.newContext(options);
    return ctx.newPage();
  };
  const close = browser.close.bind(browser);
  browser.close = async (options) => {
    await Promise.all([...run.contexts].filter((c) => c.browser() === browser).map((c) => closeContext(run, c)));
    return close(options);
  };
}

/** Any Chromium launched from now on, by the harness or the script, gets the agent's settings and recording. */
function instrumentChromium(run, pw) {
  run.pw = pw;
  patchChromium(pw.chromium, (browser) => instrumentBrowser(run, browser));
}

/** A test of whether the code names a pattern; string literals and comments do not count ("Home page" names no page). */
function namer(code) {
  const bare = code
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/(^|[^:])\/\/.*$/gm, '$1')
    .replace(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g, "''");
  return (re) => re.test(bare);
}

/**
 * The `browser`, `context`, `page` and `request` the script is given. Only what it names is started:
 * a script that launches its own browser, or an API-only multistep script, pays for no browser it
 * does not use. Null (with the agent's error in the result) if the browser could not be started.
 */
async function launchWhatTheScriptNames(run) {
  const names = namer(run.opts.code);
  const given = {};
  try {
    if (names(/\b(page|context|browser)\b/)) {
      given.browser = await run.pw.chromium.launch();
      given.context = await given.browser.newContext();
      given.page = await given.context.newPage();
    }
    if (names(/\brequest\b/)) given.request = await run.pw.request.newContext();
  } catch (err) {
    run.result.agentError = `the browser could not be started: ${describe(err).message}`;
    await Promise.all([...run.browsers].map((b) => bounded(b.close(), 5000)));
    return null;
  }
  return given;
}

/**
 * Errors that escape the script (a throw in a callback, an unhandled rejection) reject `escaped`
 * and so fail the run here rather than ending the bootstrap's step; restore() puts back the
 * process's own listeners.
 */
function trapEscapes() {
  const saved = {
    uncaughtException: process.listeners('uncaughtException'),
    unhandledRejection: process.listeners('unhandledRejection'),
  };
  let reject;
  const escaped = new Promise((_, r) => {
    reject = r;
  });
  escaped.catch(() => {});
  for (const ev of Object.keys(saved)) {
    process.removeAllListeners(ev);
    process.on(ev, (err) => reject(err));
  }
  const restore = () => {
    for (const [ev, listeners] of Object.entries(saved)) {
      process.removeAllListeners(ev);
      for (const l of listeners) process.on(ev, l);
    }
  };
  return { escaped, restore };
}

/** Runs the script until it ends, throws, lets an error escape or passes opts.deadlineAt; the result says which. */
async function runWithinDeadline(run, fn, given, escaped) {
  const { opts, result } = run;
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
  const { browser, context, page, request } = given;
  try {
    await Promise.race([
      Promise.resolve().then(() =>
        fn(run.userRequire, page, context, browser, request, mod, mod.exports, run.file, opts.jobDir),
      ),
      deadline,
      escaped,
    ]);
    result.ok = true;
  } catch (err) {
    result.error = describe(err);
  } finally {
    clearTimeout(timer);
  }
}

/** A screenshot of every page still open, to show where a failed script was. */
async function screenshotOpenPages(run) {
  let n = 0;
  for (const ctx of run.contexts) {
    for (const p of ctx.pages()) {
      if (p.isClosed()) continue;
      n += 1;
      await bounded(
        p.screenshot({
          path: path.join(run.dirs.screenshots, `failure-${n}.png`),
          timeout: Math.max(1, left(run, 3000) / 2),
        }),
        left(run, 3000) / 2,
      );
    }
  }
}

/** Closes every context (saving its trace and videos), the request context and every browser, each bounded. */
async function closeEverything(run, request) {
  await Promise.all([...run.contexts].map((c) => closeContext(run, c)));
  if (request) await bounded(request.dispose(), left(run, 5000));
  await Promise.all([...run.browsers].map((b) => bounded(b.close(), left(run, 10_000))));
}

module.exports = { run };
