'use strict';
/**
 * The program a sandbox process starts with (src/agent/sandbox/, docs/sandbox.md). It runs on the
 * job's runtime Node (22 or 24), so it is plain CommonJS without types, and it must load before any
 * user code: everything it needs is captured into local constants first.
 *
 * Protocol: it writes `{"type":"ready"}` on fd 3 once loaded, then reads newline-delimited JSON
 * steps from stdin. Each step runs one user script as an async function with `require` resolving
 * from the runtime's node_modules, `request` (setup) or `response` (teardown) in scope, and answers
 * `{"type":"done","ok":true,"context":...}` or `{"type":"done","ok":false,"error":{...}}` on fd 3.
 * When stdin ends, the process exits. The user's own console output goes to stdout/stderr, which
 * the agent reads as the check's log.
 *
 * Nothing here is a security boundary: user code can write to fd 3 or replace globals. The agent
 * treats every message as untrusted (bounded, validated), and the boundary is the process itself,
 * Node's permission model, the environment allowlist and the watchdog around it.
 */
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const { createRequire } = require('node:module');

const CONTROL_FD = 3;
const runtimeDir = process.argv[2];
const writeSync = fs.writeSync;
const stringify = JSON.stringify;

function send(message) {
  try {
    writeSync(CONTROL_FD, `${stringify(message)}\n`);
  } catch {
    // The agent went away: nothing left to tell.
  }
}

let currentStage = null;
let settleCurrent = null;

/** The line and column of the first stack frame in the user's script file, if any. */
function locate(err, filename) {
  const stack = err && typeof err.stack === 'string' ? err.stack : '';
  const escaped = filename.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // A SyntaxError's stack starts with "setup.js:3"; a runtime error has "(setup.js:3:7)" frames.
  const m = new RegExp(`${escaped}:(\\d+)(?::(\\d+))?`).exec(stack);
  return m ? { line: Number(m[1]), column: m[2] ? Number(m[2]) : null } : { line: null, column: null };
}

function describe(err, filename) {
  const isError = err instanceof Error || (err && typeof err === 'object' && 'message' in err);
  const name = isError && typeof err.name === 'string' ? err.name : 'Error';
  let message;
  try {
    message = isError
      ? String(err.message)
      : `a non-error value was thrown: ${typeof err === 'string' ? err : stringify(err)}`;
  } catch {
    message = 'a value that cannot be shown was thrown';
  }
  const where = locate(err, filename);
  // Frames of the bootstrap and of Node's internals say nothing to the user (and the first would
  // show where the agent is installed): keep the message and the user's own frames.
  const stack =
    isError && typeof err.stack === 'string'
      ? err.stack
          .split('\n')
          .filter((l) => !l.includes(__filename) && !/\(node:internal|at node:internal/.test(l))
          .join('\n')
          .slice(0, 4000)
      : null;
  return { name, message: message.slice(0, 4000), line: where.line, column: where.column, stack };
}

// Errors that escape the script's promise (a throw in a timer, an unhandled rejection) fail the
// step that is running; between steps they are reported when the next step starts.
let pendingEscape = null;
function onEscape(err) {
  if (settleCurrent) settleCurrent({ ok: false, error: describe(err, currentStage.filename) });
  else pendingEscape ??= err;
}
process.on('uncaughtException', onEscape);
process.on('unhandledRejection', onEscape);
process.on('exit', (code) => {
  if (currentStage) send({ type: 'exit', code, stage: currentStage.stage });
});

const userRequire = createRequire(path.join(runtimeDir, 'package.json'));

/** Writes `text` after everything queued on `stream`; settles when flushed (or after 2 s, or on error). */
function flushWith(stream, text) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 2000);
    try {
      stream.write(text, () => {
        clearTimeout(timer);
        resolve();
      });
    } catch {
      clearTimeout(timer);
      resolve();
    }
  });
}

async function runStep(step, silent = false) {
  currentStage = step;
  for (const [key, value] of Object.entries(step.env || {})) process.env[key] = String(value);
  const context = step.context || {};
  const result = await new Promise((resolve) => {
    settleCurrent = resolve;
    if (pendingEscape) {
      resolve({ ok: false, error: describe(pendingEscape, step.filename) });
      return;
    }
    let fn;
    try {
      // The header sits on its own line and lineOffset -1 cancels it, so reported line numbers are
      // the user's. `await` works at the top level of a script, as users expect of the reference.
      const script = new vm.Script(
        `(async function (require, request, response, module, exports, __filename, __dirname) {\n${step.code}\n})`,
        { filename: step.filename, lineOffset: -1 },
      );
      fn = script.runInThisContext();
    } catch (err) {
      resolve({ ok: false, error: describe(err, step.filename) });
      return;
    }
    const mod = { exports: {} };
    Promise.resolve()
      .then(() =>
        fn(
          userRequire,
          context.request,
          context.response,
          mod,
          mod.exports,
          path.join(process.cwd(), step.filename),
          process.cwd(),
        ),
      )
      .then(
        () => resolve({ ok: true }),
        (err) => resolve({ ok: false, error: describe(err, step.filename) }),
      );
  });
  settleCurrent = null;
  currentStage = null;
  // Values a script put under OUTPOST_SECRET_* are secrets the agent must scrub from what it sends.
  const secrets = [];
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('OUTPOST_SECRET_') && typeof value === 'string' && value !== '') secrets.push(value);
  }
  let out;
  try {
    out = stringify({ type: 'done', stage: step.stage, ...result, context, secrets });
  } catch (err) {
    out = stringify({ type: 'done', stage: step.stage, ok: false, error: describe(err, step.filename) });
  }
  if (silent) return;
  // The marker goes through the same streams as the script's output, after it (a full pipe makes
  // Node queue writes), and the done message only once both are flushed: then the agent knows the
  // step's output is complete without waiting for the process to exit.
  if (typeof step.marker === 'string') {
    await Promise.all([flushWith(process.stdout, step.marker), flushWith(process.stderr, step.marker)]);
  }
  try {
    writeSync(CONTROL_FD, `${out}\n`);
  } catch {
    // The agent went away.
  }
}

let buffered = '';
let chain = Promise.resolve();
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  let nl = buffered.indexOf('\n');
  while (nl >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    if (line.trim() !== '') {
      const step = JSON.parse(line);
      chain = chain.then(() => runStep(step));
    }
    nl = buffered.indexOf('\n');
  }
});
process.stdin.on('end', () => {
  // Timers or sockets a script left open must not keep the sandbox alive once the job is done.
  chain.then(() => process.exit(0));
});

// Warm what every job uses, so a warm sandbox's first job pays none of it: the console and its
// stdio streams (made and compiled on first use), the script compiler and an async call.
// The warm-up line is dropped by the agent (WARM_UP_LINE in process.ts).
console.log('\u0000outpost-warm-up\u0000', 1, { a: [1] });
console.error('\u0000outpost-warm-up\u0000', 1, { a: [1] });
const warmStep = JSON.parse(
  stringify({
    stage: 'setup',
    filename: 'warm.js',
    code: 'request.headers.a = String(1)',
    env: { OUTPOST_WARM_UP: '1' },
    context: { request: { headers: {} } },
  }),
);
runStep(warmStep, true)
  .then(() => Promise.all([flushWith(process.stdout, ''), flushWith(process.stderr, '')]))
  .then(() => {
    delete process.env.OUTPOST_WARM_UP;
    send({ type: 'ready', node: process.version, pid: process.pid });
  });
