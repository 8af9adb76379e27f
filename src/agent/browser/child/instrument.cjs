'use strict';
/**
 * Runs inside the sandbox (the job's runtime Node), for both ways a browser check runs
 * (../engine.ts): it gives every Chromium launch the agent's settings (the system Chromium,
 * headless, the flags of docs/checks.md) and records what each page did — the URLs it visited,
 * their titles, console errors, page errors and failed requests — into `<jobDir>/.outpost/`, where
 * the agent reads it after the run. Plain CommonJS without types: it runs on Node 22 and 24.
 */
const fs = require('node:fs');
const path = require('node:path');

const MAX_PAGES = 50;
const MAX_ITEMS = 100;
const MAX_TEXT = 2000;

function settings() {
  return JSON.parse(process.env.OUTPOST_BROWSER_SETTINGS || '{}');
}

/** Launch options every Chromium gets; the user's own options win except where the agent must decide. */
function launchDefaults(options) {
  const s = settings();
  const given = options || {};
  return {
    ...given,
    executablePath: s.chromiumPath || given.executablePath,
    // No display on an agent: a headed launch would fail, so every browser is headless.
    headless: true,
    chromiumSandbox: !s.noSandbox,
    args: [...(s.args || []), ...(given.args || [])],
  };
}

/** Makes chromium.launch / launchPersistentContext use launchDefaults (once per process). */
function patchChromium(chromium, onBrowser) {
  if (!chromium || chromium.__outpostPatched) return;
  chromium.__outpostPatched = true;
  const launch = chromium.launch.bind(chromium);
  chromium.launch = async (options) => {
    const browser = await launch(launchDefaults(options));
    if (onBrowser) onBrowser(browser);
    return browser;
  };
  const persistent = chromium.launchPersistentContext.bind(chromium);
  chromium.launchPersistentContext = (userDataDir, options) => persistent(userDataDir, launchDefaults(options));
}

const clip = (s) => (typeof s === 'string' && s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT)}…` : String(s));

class PageRecorder {
  constructor(outDir) {
    this.outDir = outDir;
    this.pages = [];
    this.seen = new WeakSet();
    this.pending = new Set();
  }

  /** Records every page of the context, present and future. */
  context(context) {
    if (this.seen.has(context)) return;
    this.seen.add(context);
    for (const page of context.pages()) this.page(page);
    context.on('page', (page) => this.page(page));
  }

  page(page) {
    if (this.seen.has(page) || this.pages.length >= MAX_PAGES) return;
    this.seen.add(page);
    const visit = (url) => {
      const entry = { url, title: null, consoleErrors: [], failedRequests: [] };
      this.pages.push(entry);
      page.__outpostEntry = entry;
      return entry;
    };
    visit(page.url());
    const current = () => page.__outpostEntry;
    const track = (p) => {
      this.pending.add(p);
      p.finally(() => this.pending.delete(p));
    };
    page.on('framenavigated', (frame) => {
      if (frame !== page.mainFrame()) return;
      const entry = current();
      // The first navigation fills the blank entry; navigating elsewhere is a new visit.
      if (entry.url === 'about:blank' || entry.url === '') entry.url = frame.url();
      else if (frame.url() !== entry.url && this.pages.length < MAX_PAGES) visit(frame.url());
    });
    page.on('load', () => {
      const entry = current();
      track(
        page
          .title()
          .then((t) => {
            entry.title = t;
          })
          .catch(() => {}),
      );
    });
    page.on('console', (msg) => {
      if (msg.type() !== 'error') return;
      const list = current().consoleErrors;
      if (list.length >= MAX_ITEMS) return;
      const loc = msg.location();
      list.push({
        type: 'console',
        text: clip(msg.text()),
        location: loc?.url ? `${loc.url}:${loc.lineNumber + 1}` : undefined,
      });
    });
    page.on('pageerror', (err) => {
      const list = current().consoleErrors;
      if (list.length < MAX_ITEMS) list.push({ type: 'pageerror', text: clip(err?.message ? err.message : err) });
    });
    page.on('requestfailed', (req) => {
      const list = current().failedRequests;
      if (list.length >= MAX_ITEMS) return;
      const failure = req.failure();
      list.push({
        url: clip(req.url()),
        method: req.method(),
        status: null,
        failure: failure ? clip(failure.errorText) : 'failed',
        resourceType: req.resourceType(),
      });
    });
    page.on('response', (res) => {
      if (res.status() < 400) return;
      const list = current().failedRequests;
      if (list.length >= MAX_ITEMS) return;
      const req = res.request();
      list.push({
        url: clip(res.url()),
        method: req.method(),
        status: res.status(),
        failure: null,
        resourceType: req.resourceType(),
      });
    });
    page.on('close', () => this.save());
  }

  /** Titles of pages still open, then save(). Bounded: a hung page must not hold the run. */
  async finish(pages, waitMs = 2000) {
    await Promise.race([
      Promise.all(
        (pages || []).map(async (page) => {
          const entry = page.__outpostEntry;
          if (!entry || page.isClosed()) return;
          entry.url = page.url();
          entry.title = await page.title().catch(() => entry.title);
        }),
      ),
      new Promise((r) => setTimeout(r, waitMs)),
    ]);
    this.save();
  }

  /** Written synchronously, so it also works from an exit handler. */
  save() {
    try {
      fs.mkdirSync(this.outDir, { recursive: true });
      fs.writeFileSync(path.join(this.outDir, `pages-${process.pid}.json`), JSON.stringify(this.pages));
    } catch {
      // the job folder is gone: the run was stopped
    }
  }
}

/** Values a script put into process.env.OUTPOST_SECRET_*, for the agent's scrubber. */
function saveSecrets(outDir) {
  const values = Object.entries(process.env)
    .filter(([k, v]) => k.startsWith('OUTPOST_SECRET_') && typeof v === 'string' && v !== '')
    .map(([, v]) => v);
  try {
    fs.mkdirSync(outDir, { recursive: true });
    fs.writeFileSync(path.join(outDir, `secrets-${process.pid}.json`), JSON.stringify(values));
  } catch {
    // gone
  }
}

module.exports = { launchDefaults, patchChromium, PageRecorder, saveSecrets, settings };
