/**
 * Public web pages at scale: a status page with 50 services on 5 cards and 10,000 incidents over two
 * years (the newest few still open, each with two updates), and a dashboard of 500 checks
 * (_dashboard-page.ts), served by the real service. For each page: the server's time p50/p99 over
 * loopback, both as most visits are served (from the cache of rendered pages) and when every visit
 * follows a change and so renders the page, what a first visit transfers gzip-compressed with its
 * stylesheets, scripts and icon, and wrk (a C client) over loopback for throughput and latency with
 * the socket and compression included (the targets are in BENCHMARKS.md). The incidents are written
 * through the store's repositories, so every derived column is what the API would store.
 *
 *   npm run bench -- pages [--services 50] [--incidents 10000] [--checks 500] [--requests 300] [--seconds 10]
 */
import { rmSync } from 'node:fs';
import { createAccount } from '../../src/service/accounts.ts';
import { buildService } from '../../src/service/app.ts';
import { loadServiceConfig } from '../../src/service/config.ts';
import { openSqliteStore } from '../../src/service/store/sqlite/index.ts';
import { INCIDENT_SEVERITIES } from '../../src/service/store/status-pages-types.ts';
import { tempDataDir } from '../../test/helpers/public-api.ts';
import { twoColourPalette } from '../../test/support/web-theme-palette.ts';
import { startNginx } from './_blackbox.ts';
import { seedDashboard, storeOneResult } from './_dashboard-page.ts';
import { coldTimes, ServerTimes, serverTimes, transferred } from './_page-measure.ts';
import { numberFlags, roundTo } from './_stats.ts';
import { requireTools, TOOLS } from './_tools.ts';
import { runWrk, WRK_DONE_LUA } from './_wrk.ts';

/** wrk's Lua: a browser's GET of the page, gzip accepted. */
const PAGE_LUA = `
request = function()
  return wrk.format("GET", nil, {["Accept"] = "text/html", ["Accept-Encoding"] = "gzip"})
end
${WRK_DONE_LUA}`;

const DAY_MS = 86_400_000;
const OPEN = 5;

async function seed(
  dataDir: string,
  services: number,
  incidents: number,
): Promise<{ url: string; accountId: string; serviceId: string }> {
  const store = await openSqliteStore(dataDir);
  try {
    const { accountId } = await createAccount(store, 'Bench');
    const serviceIds: string[] = [];
    for (let i = 0; i < services; i++)
      serviceIds.push((await store.statusPageServices.create(accountId, `Service ${i}`)).id);
    const cards = Array.from({ length: 5 }, (_, c) => ({
      name: `Card ${c}`,
      serviceIds: serviceIds.filter((_, i) => i % 5 === c),
    }));
    const page = await store.statusPages.create(accountId, {
      name: 'Bench status',
      url: 'bench',
      customDomain: null,
      themeColors: { light: twoColourPalette('#FFFFFF', '#111111'), dark: twoColourPalette('#111111', '#EEEEEE') },
      logo: null,
      logoDark: null,
      redirectTo: 'https://bench.example/',
      favicon: null,
      defaultTheme: 'AUTO',
      version: null,
      description: 'A status page with many services and incidents',
      isPrivate: false,
      whiteLabel: false,
      cards,
    });
    const now = Date.now();
    const spacing = (730 * DAY_MS) / incidents;
    for (let i = incidents - 1; i >= 0; i--) {
      const start = new Date(now - i * spacing - 60_000);
      const serviceIdsOf = [
        serviceIds[i % services] as string,
        ...(i % 3 === 0 ? [serviceIds[(i + 7) % services] as string] : []),
      ];
      const update = {
        description: 'We are investigating elevated error rates.',
        status: 'INVESTIGATING' as const,
        publicIncidentUpdateDate: start.toISOString(),
        notifySubscribers: false,
      };
      const created = await store.incidents.create(accountId, {
        name: `Incident ${i}`,
        severity: INCIDENT_SEVERITIES[i % 4] ?? 'MINOR',
        serviceIds: serviceIdsOf,
        update,
      });
      if (i < OPEN) continue;
      const resolvedAt = new Date(start.getTime() + 45 * 60_000).toISOString();
      await store.incidents.addUpdate(accountId, created.value.id, {
        ...update,
        description: 'Resolved: error rates are back to normal.',
        status: 'RESOLVED',
        publicIncidentUpdateDate: resolvedAt,
      });
    }
    return { url: `/status/${page.url}`, accountId, serviceId: serviceIds[0] as string };
  } finally {
    await store.close();
  }
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const flags = numberFlags(args, { services: 50, incidents: 10_000, checks: 500, requests: 300, seconds: 10 });
  // wrk drives both the service and the peer; without it the comparison would be empty.
  requireTools(TOOLS.nginx, TOOLS.wrk);
  const dataDir = tempDataDir();
  try {
    const seedStarted = performance.now();
    const status = await seed(dataDir, flags.services, flags.incidents);
    const service = await buildService(loadServiceConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' }), {
      logger: false,
    });
    try {
      const board = await seedDashboard(service.store, dataDir, flags.checks);
      const seedSeconds = Math.round((performance.now() - seedStarted) / 100) / 10;
      const times = new ServerTimes(service.app);
      const base = await service.start();
      const measure = async (url: string, invalidate: (i: number) => Promise<void>) => ({
        // Served from the cache of rendered pages, as most visits are.
        serverMs: await serverTimes(times, base, url, { requests: flags.requests, warmup: 30 }),
        // Each after a write that changes the page, so each renders.
        renderMs: await coldTimes(times, base, url, { requests: Math.min(flags.requests, 100), invalidate }),
        KB: kb(await transferred(service.app, url)),
        wrk: await runWrk({ url: `${base}${url}`, lua: PAGE_LUA, connections: 4, seconds: flags.seconds }),
        peerNginx: await nginxServing(service.app, url, flags.seconds),
      });
      const { store } = service;
      const statusPage = await measure(status.url, (i) =>
        store.statusPageServices.update(status.accountId, status.serviceId, `Service 0 (${i})`).then(() => undefined),
      );
      const dashboard = await measure(board.url, (i) =>
        storeOneResult(store, board.accountId, board.checkIds[i % board.checkIds.length] as string, i),
      );
      return { ...flags, seedSeconds, statusPage, dashboard };
    } finally {
      await service.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * The peer: nginx serving the same page, as a file and its gzip made beforehand (gzip_static), driven by
 * the same wrk run: the ceiling for a page served from a cache.
 */
async function nginxServing(app: Awaited<ReturnType<typeof buildService>>['app'], url: string, seconds: number) {
  const plain = await app.inject({ method: 'GET', url, headers: { accept: 'text/html' } });
  const zipped = await app.inject({ method: 'GET', url, headers: { accept: 'text/html', 'accept-encoding': 'gzip' } });
  const nginx = await startNginx({
    files: { 'index.html': plain.rawPayload, 'index.html.gz': zipped.rawPayload },
    location: (root) =>
      `location / { root ${root}; gzip_static on; default_type text/html; try_files /index.html =404; }`,
  });
  try {
    return await runWrk({ url: `http://127.0.0.1:${nginx.port}${url}`, lua: PAGE_LUA, connections: 4, seconds });
  } finally {
    await nginx.stop();
  }
}

const kb = (size: Awaited<ReturnType<typeof transferred>>) => ({
  page: roundTo(size.pageBytes / 1024, 1),
  assets: roundTo(size.assetBytes / 1024, 1),
  total: roundTo(size.totalBytes / 1024, 1),
  rawPage: roundTo(size.rawPageBytes / 1024, 1),
});
