// Keeps a dashboard live without reloading it: every refreshRate seconds the live region is fetched
// again as a fragment and swapped in, and with pagination the pages rotate every paginationRate
// seconds. Checks a reader opened stay open. Without this script a <noscript> meta refresh reloads.
(() => {
  const region = document.getElementById('dashboard-region');
  if (!region) return;
  const url = region.dataset.regionUrl;
  const refreshMs = Number(region.dataset.refreshSeconds) * 1000;
  const rotateMs = Number(region.dataset.paginationSeconds) * 1000;

  const current = () => region.querySelector('.dashboard-region');
  const pageOf = (el, name) => Number(el?.dataset[name] ?? 1) || 1;

  async function show(page) {
    const res = await fetch(`${url}?page=${page}`, { credentials: 'same-origin', headers: { accept: 'text/html' } });
    if (!res.ok) return;
    const opened = new Set([...region.querySelectorAll('details[open]')].map((d) => d.dataset.checkId));
    const template = document.createElement('template');
    template.innerHTML = await res.text();
    for (const details of template.content.querySelectorAll('details')) {
      if (opened.has(details.dataset.checkId)) details.open = true;
    }
    region.replaceChildren(template.content);
    region.dispatchEvent(new CustomEvent('dashboard:updated', { bubbles: true }));
  }

  const safely = (fn) => () => fn().catch(() => {});
  if (refreshMs > 0) setInterval(safely(() => show(pageOf(current(), 'page'))), refreshMs);
  if (rotateMs > 0) {
    setInterval(
      safely(() => {
        const el = current();
        const pages = pageOf(el, 'pages');
        return pages > 1 ? show((pageOf(el, 'page') % pages) + 1) : Promise.resolve();
      }),
      rotateMs,
    );
  }
})();
