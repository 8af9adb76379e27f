'use strict';
/**
 * Copied into the job folder as outpost-fixtures.cjs; a `@playwright/test` script's own import of
 * '@playwright/test' is pointed here (../script-files.ts). It is '@playwright/test' with one change:
 * the `context` fixture records what its pages do (./instrument.cjs), and any Chromium the script
 * launches itself gets the agent's launch settings. Runs in the Playwright worker, on the runtime's Node.
 */
const path = require('node:path');
const base = require('@playwright/test');
const { patchChromium, PageRecorder, saveSecrets } = require('./outpost-instrument.cjs');

const outDir = path.join(__dirname, '.outpost');
patchChromium(base.chromium);
const recorder = new PageRecorder(outDir);
process.on('exit', () => {
  recorder.save();
  saveSecrets(outDir);
});

const test = base.test.extend({
  context: async ({ context }, use) => {
    recorder.context(context);
    await use(context);
    await recorder.finish(context.pages());
  },
});

module.exports = { ...base, test, default: test };
