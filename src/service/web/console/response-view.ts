/**
 * What the check got back, as the agent stored it (secrets already scrubbed on the agent): an API
 * response's status, headers and body, a TCP server's data or a DNS answer. A large body is cut
 * here so one result cannot make a page of megabytes; the note says so and the API has all of it.
 */
import type { RunResult } from '../../../shared/protocol.ts';
import { html } from '../html.ts';

/** Characters of a body shown on the page. */
export const BODY_SHOWN_CHARS = 64 * 1024;

export interface ResponseShown {
  summary: string | null;
  headers: Array<[string, string]>;
  body: string;
  /** Why the body shown is not the whole of it, if it is not. */
  bodyNote: string | null;
}

export function responseOf(result: RunResult): ResponseShown | null {
  const api = result.apiCheckResult?.response;
  if (api) {
    const note =
      api.bodyError ?? (api.bodyTruncated ? 'The agent cut this body at its size limit before storing it.' : null);
    return {
      summary: `${api.status} ${api.statusText}`.trim(),
      headers: Object.entries(api.headers ?? {}),
      body: api.body,
      bodyNote: note,
    };
  }
  const tcp = result.details?.tcpCheckResult?.response;
  if (tcp) {
    const note = tcp.dataTruncated ? `The agent kept the first part of the ${tcp.bytesReceived} bytes received.` : null;
    return {
      summary: `${tcp.bytesReceived} bytes from ${tcp.remoteAddress}:${tcp.remotePort}`,
      headers: [],
      body: tcp.data,
      bodyNote: note,
    };
  }
  const dns = result.details?.dnsCheckResult?.response;
  if (dns)
    return {
      summary: `${dns.rcode} from ${dns.server.address}:${dns.server.port}`,
      headers: [],
      body: dns.textAnswer,
      bodyNote: null,
    };
  const ssl = result.details?.sslCheckResult?.response;
  if (ssl) {
    // An SSL monitor: the handshake's facts in a line, the certificate chain as the body.
    const leaf = ssl.certificate;
    const summary = `${ssl.protocol ?? 'TLS'} ${ssl.cipherSuite ?? ''} from ${ssl.resolvedIp}; ${leaf?.subjectCN ?? 'no certificate'} issued by ${leaf?.issuerCN ?? 'unknown'}, ${ssl.daysUntilExpiry ?? '?'} days left; chain ${ssl.chainTrusted ? 'trusted' : 'not trusted'}, host name ${ssl.hostnameVerified ? 'verified' : 'not verified'}`;
    return { summary, headers: [], body: JSON.stringify(ssl.chain, null, 2), bodyNote: null };
  }
  return null;
}

function cut(body: string, note: string | null): { text: string; note: string | null } {
  if (body.length <= BODY_SHOWN_CHARS) return { text: body, note };
  const shown = `Showing the first ${BODY_SHOWN_CHARS.toLocaleString('en')} of ${body.length.toLocaleString('en')} characters; the API's result has the whole body.`;
  return { text: body.slice(0, BODY_SHOWN_CHARS), note: note ? `${shown} ${note}` : shown };
}

export function ResponseView({ response }: { response: ResponseShown | null }) {
  if (!response) return null;
  const body = cut(response.body, response.bodyNote);
  return html`<section aria-labelledby="response-heading">
    <h2 id="response-heading">Response</h2>
    ${response.summary ? html`<p>${response.summary}</p>` : null}
    ${
      response.headers.length > 0
        ? html`<h3>Headers</h3>
          <table class="headers">
            <thead><tr><th scope="col">Name</th><th scope="col">Value</th></tr></thead>
            <tbody>${response.headers.map(([k, v]) => html`<tr><td><code>${k}</code></td><td><code>${v}</code></td></tr>`)}</tbody>
          </table>`
        : null
    }
    <h3>Body</h3>
    ${body.note ? html`<p class="note">${body.note}</p>` : null}
    ${body.text ? html`<pre class="response-body" tabindex="0" aria-label="Response body">${body.text}</pre>` : html`<p class="muted">Empty.</p>`}
  </section>`;
}
