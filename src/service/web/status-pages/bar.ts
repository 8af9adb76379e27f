/**
 * A service's 90-day bar as markup: one list item per day, its text (the day, its incidents) visually
 * hidden and shown on hover or focus, a day with incidents linking to the first one's page. Written
 * as a string, with every value escaped here, because a page of 50 services has 4,500 such days and
 * building a virtual node for each cost most of the page's server time. Days without incidents read
 * the same on every service's bar, so each is written once per page.
 */
import { escapeMarkup } from './escape.ts';
import { incidentPath } from './incident-view.ts';
import { dayLabel, type HistoryDay, severityState, worstSeverity } from './state.ts';

function dayMarkup(day: HistoryDay, base: string): string {
  const worst = worstSeverity(day.incidents.map((i) => i.severity));
  // The span is visually hidden by status-page.css (`.sp-bar span`): no class on 4,500 of them.
  const label = `<span>${escapeMarkup(dayLabel(day))}</span>`;
  const first = day.incidents[0];
  if (!first || !worst) return `<li>${label}</li>`;
  return `<li class="d-${severityState(worst).tone}"><a href="${escapeMarkup(incidentPath(base, first))}">${label}</a></li>`;
}

/** A writer of the <li> items of each bar's <ol>, oldest day first, for one page render. */
export function dayBarWriter(base: string): (days: readonly HistoryDay[]) => string {
  const quietDays = new Map<string, string>();
  return (days) => {
    let markup = '';
    for (const day of days) {
      if (day.incidents.length > 0) {
        markup += dayMarkup(day, base);
        continue;
      }
      let quiet = quietDays.get(day.day);
      if (quiet === undefined) {
        quiet = dayMarkup(day, base);
        quietDays.set(day.day, quiet);
      }
      markup += quiet;
    }
    return markup;
  };
}
