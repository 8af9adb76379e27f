/**
 * Rendered pages, one slot per page address holding the rendering of its latest version only. A new
 * version replaces the slot's page instead of being added beside it: pages of versions nobody will
 * ask for again would otherwise fill the cache with hundreds of kilobytes each, and the garbage
 * collector's work on that old generation lands on the next render. Visits that arrive while a slot
 * renders share that render.
 */
import { LRUCache } from 'lru-cache';
import { type RenderedPage, renderedSize } from './precompressed.ts';

interface Slot {
  version: string;
  page: RenderedPage;
}

export class RenderCache {
  readonly #slots: LRUCache<string, Slot>;
  readonly #rendering = new Map<string, { version: string; page: Promise<RenderedPage> }>();

  /** `ttlMs`: how long a rendering is reused at most, for changes the version cannot see. */
  constructor(o: { maxBytes: number; ttlMs?: number }) {
    this.#slots = new LRUCache<string, Slot>({
      maxSize: o.maxBytes,
      sizeCalculation: (s) => renderedSize(s.page),
      ttl: o.ttlMs ?? 0,
    });
  }

  /** The page of `slot` at `version`: the cached one, the render in flight, or a new render. */
  get(slot: string, version: string, render: () => Promise<string> | string): Promise<RenderedPage> {
    const cached = this.#slots.get(slot);
    if (cached?.version === version) return Promise.resolve(cached.page);
    const inFlight = this.#rendering.get(slot);
    if (inFlight?.version === version) return inFlight.page;
    // Rendered on a later turn, so the slot's render in flight is recorded before it can settle.
    const page: Promise<RenderedPage> = Promise.resolve()
      .then(render)
      .then((html) => {
        const rendered: RenderedPage = { html };
        // A slower render of an older version must not replace a newer one.
        if (this.#rendering.get(slot)?.page === page) this.#slots.set(slot, { version, page: rendered });
        return rendered;
      })
      .finally(() => {
        if (this.#rendering.get(slot)?.page === page) this.#rendering.delete(slot);
      });
    this.#rendering.set(slot, { version, page });
    return page;
  }
}
