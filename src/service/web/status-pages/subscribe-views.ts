/**
 * The pages of subscribing: the form (with field errors), what happens next, and the confirm and
 * unsubscribe pages a message's links open. Plain HTML forms: everything works without script.
 */
import type { VNode } from 'preact';
import type {
  DefaultTheme,
  SubscribablePage,
  SubscribeOutcome,
  SubscriptionByToken,
} from '../../store/status-pages-types.ts';
import { assetUrl } from '../assets.ts';
import { html } from '../html.ts';
import { renderPage, type ThemeChoice } from '../layout.ts';
import type { FieldErrors, SubscribeField, SubscribeFormValues } from './subscribe-form.ts';

const THEMES: Record<DefaultTheme, ThemeChoice> = { AUTO: 'auto', LIGHT: 'light', DARK: 'dark' };

function page(title: string, theme: ThemeChoice, body: VNode): string {
  return renderPage({
    title,
    theme,
    stylesheets: [assetUrl('subscribe.css')],
    bodyClass: 'status-page subscribe',
    children: body,
  });
}

function field(
  name: SubscribeField,
  label: string,
  attrs: { type: string; value: string; autocomplete: string; hint: string },
  error: string | undefined,
) {
  const described = [`${name}-hint`, error ? `${name}-error` : ''].filter(Boolean).join(' ');
  return html`<div class=${error ? 'field has-error' : 'field'}>
    <label for=${name}>${label}</label>
    <p id=${`${name}-hint`} class="hint muted">${attrs.hint}</p>
    ${error ? html`<p id=${`${name}-error`} class="field-error"><span class="sr-only">Error: </span>${error}</p>` : null}
    <input id=${name} name=${name} type=${attrs.type} value=${attrs.value} autocomplete=${attrs.autocomplete}
      aria-describedby=${described} aria-invalid=${error ? 'true' : undefined} />
  </div>`;
}

export interface FormPageProps {
  statusPage: SubscribablePage;
  backHref: string;
  values?: SubscribeFormValues;
  errors?: FieldErrors;
  confirmHours: number;
}

export function subscribeFormPage({ statusPage, backHref, values, errors = {}, confirmHours }: FormPageProps): string {
  const v = values ?? { channel: 'email', email: '', url: '' };
  const hasErrors = Object.keys(errors).length > 0;
  return page(
    `${hasErrors ? 'Error: ' : ''}Subscribe to ${statusPage.name}`,
    THEMES[statusPage.defaultTheme],
    html`<main id="main" class="narrow">
    <p><a href=${backHref}>Back to ${statusPage.name}</a></p>
    <h1>Subscribe to ${statusPage.name}</h1>
    <p>Get a message when an incident is opened or updated. Nothing is sent until you confirm.</p>
    <section class="card" aria-labelledby="by-email">
      <h2 id="by-email">By email</h2>
      <form method="post" novalidate>
        <input type="hidden" name="channel" value="email" />
        ${field('email', 'Email address', { type: 'email', value: v.email, autocomplete: 'email', hint: `We send a confirmation link, valid for ${confirmHours} hours.` }, errors.email)}
        <button type="submit">Subscribe by email</button>
      </form>
    </section>
    <section class="card" aria-labelledby="by-webhook">
      <h2 id="by-webhook">By webhook</h2>
      <form method="post" novalidate>
        <input type="hidden" name="channel" value="webhook" />
        ${field('url', 'Webhook URL', { type: 'url', value: v.url, autocomplete: 'url', hint: 'Each message is a signed JSON POST; the first one carries the link that confirms the subscription.' }, errors.url)}
        <button type="submit">Subscribe by webhook</button>
      </form>
    </section>
  </main>`,
  );
}

export interface DonePageProps {
  statusPage: SubscribablePage;
  backHref: string;
  type: 'EMAIL' | 'WEBHOOK';
  address: string;
  outcome: SubscribeOutcome;
  /** A new webhook subscription's signing secret, shown this once. */
  secret: string | null;
  confirmHours: number;
}

/** The same words for an email address whatever its outcome: the page must not tell who is subscribed. */
export function subscribeDonePage(p: DonePageProps): string {
  const body =
    p.type === 'EMAIL'
      ? html`<h1>Check your inbox</h1>
          <p>If <strong>${p.address}</strong> is not subscribed yet, a confirmation email is on its way to it. Open its link within ${p.confirmHours} hours to start getting updates of ${p.statusPage.name}.</p>`
      : webhookDone(p);
  return page(
    `Subscribe to ${p.statusPage.name}`,
    THEMES[p.statusPage.defaultTheme],
    html`<main id="main" class="narrow">
    ${body}
    <p><a href=${p.backHref}>Back to ${p.statusPage.name}</a></p>
  </main>`,
  );
}

function webhookDone(p: DonePageProps): VNode {
  if (p.outcome === 'exists')
    return html`<h1>Already subscribed</h1><p>${p.address} already gets the updates of ${p.statusPage.name}.</p>`;
  if (p.outcome !== 'created') {
    return html`<h1>Waiting for confirmation</h1>
      <p>${p.address} was subscribed already and has a confirmation request. Use the secret you were shown then.</p>`;
  }
  return html`<h1>Check your endpoint</h1>
    <p>We sent a signed POST of type <code>subscription.confirmation</code> to <strong>${p.address}</strong>. Open its <code>confirmUrl</code> within ${p.confirmHours} hours to start getting updates of ${p.statusPage.name}.</p>
    <p>Every message is signed with this secret (<code>x-outpost-signature</code>). It is shown only now: keep it.</p>
    <pre><code>${p.secret}</code></pre>`;
}

export function tooManyPage(statusPage: SubscribablePage, backHref: string, retryAfterSeconds: number): string {
  const minutes = Math.max(1, Math.ceil(retryAfterSeconds / 60));
  return page(
    'Too many requests',
    THEMES[statusPage.defaultTheme],
    html`<main id="main" class="narrow">
    <h1>Too many requests</h1>
    <p>This page got too many subscriptions from your address. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.</p>
    <p><a href=${backHref}>Back to ${statusPage.name}</a></p>
  </main>`,
  );
}

export function crossSitePage(backHref: string): string {
  return page(
    'Form refused',
    'auto',
    html`<main id="main" class="narrow">
    <h1>Form refused</h1>
    <p>This form can only be sent from its own page. Open the page and send it again.</p>
    <p><a href=${backHref}>Open the form</a></p>
  </main>`,
  );
}

/** The confirm or unsubscribe page a link opens: a button, since mail scanners open links but do not press buttons. */
export function tokenActionPage(action: 'confirm' | 'unsubscribe', found: SubscriptionByToken): string {
  const confirm = action === 'confirm';
  const title = confirm ? `Confirm your subscription to ${found.page.name}` : `Unsubscribe from ${found.page.name}`;
  return page(
    title,
    'auto',
    html`<main id="main" class="narrow">
    <h1>${title}</h1>
    <p>${confirm ? 'Updates of' : 'Stop sending updates of'} ${found.page.name} ${confirm ? 'will go to' : 'to'} <strong>${found.subscription.address}</strong>.</p>
    <form method="post">
      <button type="submit">${confirm ? 'Confirm subscription' : 'Unsubscribe'}</button>
    </form>
  </main>`,
  );
}

export function tokenDonePage(action: 'confirm' | 'unsubscribe', found: SubscriptionByToken): string {
  const confirm = action === 'confirm';
  const title = confirm ? 'Subscription confirmed' : 'Unsubscribed';
  return page(
    title,
    'auto',
    html`<main id="main" class="narrow">
    <h1>${title}</h1>
    <p>${
      confirm
        ? html`<strong>${found.subscription.address}</strong> now gets the updates of ${found.page.name}. Every message has a link to unsubscribe.`
        : html`<strong>${found.subscription.address}</strong> no longer gets the updates of ${found.page.name}.`
    }</p>
  </main>`,
  );
}

export function tokenInvalidPage(): string {
  return page(
    'Link not valid',
    'auto',
    html`<main id="main" class="narrow">
    <h1>This link is not valid</h1>
    <p>It was used already, or it expired, or it was copied incompletely. To subscribe again, use the status page's subscribe form.</p>
  </main>`,
  );
}
