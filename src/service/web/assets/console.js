// Live updates of the operator console: every element with data-live-src gets its content again from
// that URL (an HTML fragment the service renders) every data-live-seconds while the page is visible.
// Polling rather than server-sent events: docs/architecture.md, "Web pages". When the session has
// ended (401), polling stops and the page says so; the page itself keeps working without script.
function startLive(element) {
  const seconds = Number(element.dataset.liveSeconds) || 10;
  let timer;
  const schedule = () => {
    timer = setTimeout(refresh, seconds * 1000);
  };
  async function refresh() {
    if (document.hidden) return;
    try {
      const response = await fetch(element.dataset.liveSrc, {
        credentials: 'same-origin',
        headers: { accept: 'text/html' },
      });
      if (response.status === 401) {
        element.insertAdjacentHTML(
          'beforebegin',
          '<p class="form-error" role="alert">You are signed out: sign in again to see live updates.</p>',
        );
        return;
      }
      if (response.ok) {
        const template = document.createElement('template');
        template.innerHTML = await response.text();
        element.replaceChildren(template.content);
      }
    } catch {
      // The service is unreachable for a moment: try again at the next tick.
    }
    schedule();
  }
  document.addEventListener('visibilitychange', () => {
    clearTimeout(timer);
    if (!document.hidden) refresh();
  });
  schedule();
}

for (const element of document.querySelectorAll('[data-live-src]')) startLive(element);
