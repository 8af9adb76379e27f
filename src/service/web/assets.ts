/**
 * Static files of the web pages (stylesheet, scripts, icons), served by the service itself at
 * `/assets/<name>`: no CDN. Each URL carries a hash of the file's bytes, so the files can be cached for a
 * long time and a new release is fetched at once.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

const ASSET_DIR = fileURLToPath(new URL('./assets/', import.meta.url));
const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

interface Asset {
  body: Buffer;
  type: string;
  hash: string;
}

function loadAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(ASSET_DIR)) {
    const type = TYPES[path.extname(name)];
    if (!type) continue;
    const body = readFileSync(path.join(ASSET_DIR, name));
    assets.set(name, { body, type, hash: createHash('sha256').update(body).digest('hex').slice(0, 12) });
  }
  return assets;
}

const assets = loadAssets();

/** The URL of an asset, with its content hash as the cache key; throws for a file that is not there. */
export function assetUrl(name: string): string {
  const asset = assets.get(name);
  if (!asset) throw new Error(`web asset ${name} is not in ${ASSET_DIR}`);
  return `/assets/${name}?v=${asset.hash}`;
}

export async function assetRoutes(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { name: string } }>('/assets/:name', async (request, reply) => {
    const asset = assets.get(request.params.name);
    if (!asset) return reply.callNotFound();
    return reply
      .type(asset.type)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'public, max-age=31536000, immutable')
      .send(asset.body);
  });
}
