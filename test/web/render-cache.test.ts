/**
 * The cache of rendered pages: one slot per page address, holding its latest version only, with
 * visits during a render sharing it.
 */
import { describe, expect, it } from 'vitest';
import { RenderCache } from '../../src/service/web/render-cache.ts';

/** Renders that each finish when the test says so (the i-th call with finish(i, …)), counting calls. */
function deferredRenders() {
  const results: PromiseWithResolvers<string>[] = [];
  const nth = (i: number) => {
    results[i] ??= Promise.withResolvers<string>();
    return results[i];
  };
  let calls = 0;
  const render = () => nth(calls++).promise;
  return { render, finish: (i: number, html: string) => nth(i).resolve(html), calls: () => calls };
}

describe('RenderCache', () => {
  it('renders a version once, and visits during that render share it', async () => {
    const cache = new RenderCache({ maxBytes: 1024 * 1024 });
    const r = deferredRenders();
    const first = cache.get('page', 'v1', r.render);
    const second = cache.get('page', 'v1', r.render);
    r.finish(0, '<p>v1</p>');
    expect([(await first).html, (await second).html]).toEqual(['<p>v1</p>', '<p>v1</p>']);
    expect((await cache.get('page', 'v1', r.render)).html).toBe('<p>v1</p>');
    expect(r.calls()).toBe(1);
  });

  it('keeps only the latest version of a slot: a page of an older version is rendered again', async () => {
    const cache = new RenderCache({ maxBytes: 1024 * 1024 });
    let calls = 0;
    const render = (html: string) => () => {
      calls++;
      return html;
    };
    await cache.get('page', 'v1', render('one'));
    await cache.get('page', 'v2', render('two'));
    expect((await cache.get('page', 'v2', render('unused'))).html).toBe('two');
    expect((await cache.get('page', 'v1', render('one again'))).html).toBe('one again');
    expect((await cache.get('other', 'v1', render('other'))).html).toBe('other');
    expect(calls).toBe(4);
  });

  it('does not let a slower render of an older version replace a newer one', async () => {
    const cache = new RenderCache({ maxBytes: 1024 * 1024 });
    const r = deferredRenders();
    const old = cache.get('page', 'v1', r.render);
    const fresh = cache.get('page', 'v2', r.render);
    r.finish(1, 'new');
    await fresh;
    r.finish(0, 'old');
    expect((await old).html).toBe('old');
    expect((await cache.get('page', 'v2', r.render)).html).toBe('new');
    expect(r.calls()).toBe(2);
  });

  it('renders again after a render failed, rather than keeping the failure', async () => {
    const cache = new RenderCache({ maxBytes: 1024 * 1024 });
    await expect(
      cache.get('page', 'v1', () => {
        throw new Error('store away');
      }),
    ).rejects.toThrow('store away');
    await expect(cache.get('page', 'v1', () => Promise.reject(new Error('still away')))).rejects.toThrow('still away');
    expect((await cache.get('page', 'v1', () => 'back')).html).toBe('back');
  });
});
