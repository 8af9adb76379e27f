// Keeps a dashboard live without reloading it: every refreshRate seconds the live region is fetched
// again as a fragment and swapped in, and with pagination the pages rotate every paginationRate
// seconds. Checks a reader opened stay open. Without this script a <noscript> meta refresh reloads.
(() => {
  const region = document.getElementById('dashboard-region');
  if (!region) return;
  const url = region.dataset.regionUrl;
  const refreshMs = Number(region.dataset.refreshSeconds) * 1000;
  const rotateMs = Number(region.dataset.paginationSeconds) * 1000;

  const announce = document.getElementById('dashboard-announce');
  const summary = () => region.querySelector('.status-summary')?.textContent ?? '';
  const current = () => region.querySelector('.dashboard-region');
  const numberIn = (name) => Number(current()?.dataset[name] ?? 1) || 1;
  // The page shown is kept here, not read back from the DOM: a refresh that fires while a rotation's
  // fetch is under way must ask for the new page. `latest` drops answers that arrive out of order.
  let page = numberIn('page');
  let latest = 0;

  async function show(wanted) {
    const ticket = ++latest;
    page = wanted;
    const res = await fetch(`${url}?page=${wanted}`, { credentials: 'same-origin', headers: { accept: 'text/html' } });
    if (!res.ok || ticket !== latest) return;
    const text = await res.text();
    if (ticket !== latest) return;
    const opened = new Set([...region.querySelectorAll('details[open]')].map((d) => d.dataset.checkId));
    const template = document.createElement('template');
    template.innerHTML = text;
    for (const details of template.content.querySelectorAll('details')) {
      if (opened.has(details.dataset.checkId)) details.open = true;
    }
    const before = summary();
    region.replaceChildren(template.content);
    page = numberIn('page');
    if (announce && summary() !== before) announce.textContent = summary();
  }

  const safely = (fn) => () => fn().catch(() => {});
  if (refreshMs > 0)
    setInterval(
      safely(() => show(page)),
      refreshMs,
    );
  if (rotateMs > 0) {
    setInterval(
      safely(() => {
        const pages = numberIn('pages');
        return pages > 1 ? show((page % pages) + 1) : Promise.resolve();
      }),
      rotateMs,
    );
  }
})();
