/**
 * Local stand-ins for the providers alert channels talk to, on 127.0.0.1: a signed-webhook
 * receiver, Slack's incoming webhooks, PagerDuty's Events API v2, Opsgenie's Alert API, SMS and
 * voice gateways, and an SMTP server. Each speaks its provider's request and answer format (a
 * malformed request gets the provider's 4xx), records what arrived, and lets a test await
 * arrivals (`next`, `waitFor`, with a timeout error) instead of sleeping. Each can be told to fail
 * (`failNext`: answer 500) or to hold requests unanswered (`stall`), for retry and crash tests.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DELIVERY_HEADER, SIGNATURE_HEADER, verifyWebhookSignature } from '../../src/service/notify/webhook.ts';
import { Arrivals, listenSmtp } from '../helpers/notify-receivers.ts';
import { type ParsedMail, parseMail } from './mime.ts';

/** One request as a receiver saw it. */
export interface ReceivedRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  json: unknown;
  /** The status answered; null when the sender went away before an answer (a stalled request). */
  answered: number | null;
  receivedAt: number;
}

interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Decides the answer to a well-behaved receiver's request (when not failing or stalled). */
type Respond = (req: ReceivedRequest) => Answer;

/** What every receiver can be told: fail the next requests, or hold them unanswered. */
class FaultControl {
  #failures = 0;
  #stalled: Array<() => void> | null = null;

  /** The next `count` requests are answered 500 (a provider outage). */
  failNext(count: number): void {
    this.#failures += count;
  }

  /** Holds every request unanswered until the returned function is called (or the sender gives up). */
  stall(): () => void {
    this.#stalled ??= [];
    return () => {
      const held = this.#stalled ?? [];
      this.#stalled = null;
      for (const answer of held) answer();
    };
  }

  /** Runs `answer` now, after the stall, or answers 500 when a failure was asked for. */
  apply(answer: () => void, fail: () => void): void {
    if (this.#stalled) this.#stalled.push(() => this.apply(answer, fail));
    else if (this.#failures > 0) {
      this.#failures--;
      fail();
    } else answer();
  }
}

export interface HttpReceiver<R extends ReceivedRequest = ReceivedRequest> {
  url: string;
  /** Requests once answered, or abandoned by their sender. */
  requests: Arrivals<R>;
  /** Requests as they arrive, before any answer: a stalled one shows here at once. */
  arrived: Arrivals<R>;
  faults: FaultControl;
  close(): Promise<void>;
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

function send(res: ServerResponse, answer: Answer): void {
  const isText = typeof answer.body === 'string';
  const payload = answer.body === undefined ? '' : isText ? (answer.body as string) : JSON.stringify(answer.body);
  res.writeHead(answer.status, { 'content-type': isText ? 'text/plain' : 'application/json', ...answer.headers });
  res.end(payload);
}

/** An HTTP server on loopback that records each request (as `read` reads it) once answered or abandoned. */
export async function startHttpReceiver<R extends ReceivedRequest = ReceivedRequest>(
  respond: Respond,
  read: (req: ReceivedRequest) => R = (req) => req as R,
): Promise<HttpReceiver<R>> {
  const requests = new Arrivals<R>();
  const arrived = new Arrivals<R>();
  const faults = new FaultControl();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const seen: ReceivedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        json: parseJson(body),
        answered: null,
        receivedAt: Date.now(),
      };
      arrived.push(read(seen));
      let recorded = false;
      const record = () => {
        if (recorded) return;
        recorded = true;
        requests.push(read(seen));
      };
      // A sender that goes away while its request is held (killed, timed out) is recorded unanswered.
      res.once('close', () => record());
      const reply = (answer: Answer) => {
        if (res.destroyed || res.writableEnded) return;
        seen.answered = answer.status;
        send(res, answer);
        record();
      };
      faults.apply(
        () => reply(respond(seen)),
        () => reply({ status: 500, body: { message: 'receiver told to fail' } }),
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    arrived,
    faults,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A signed webhook as the generic receiver checked it. */
export interface ReceivedWebhook extends ReceivedRequest {
  deliveryId: string | undefined;
  signatureValid: boolean;
}

export interface WebhookReceiver extends HttpReceiver<ReceivedWebhook> {
  /** Delivery ids (x-outpost-delivery) answered with 2xx, with how often each was. */
  deliveredCounts(): Map<string, number>;
}

const headerValue = (v: string | string[] | undefined) => (typeof v === 'string' ? v : undefined);

/**
 * A generic webhook endpoint that verifies the HMAC signature with the channel's secret (401 when it
 * does not match, as a careful receiver would) and records each request's x-outpost-delivery id.
 */
export async function startWebhookReceiver(secret: string): Promise<WebhookReceiver> {
  const valid = (req: ReceivedRequest) =>
    verifyWebhookSignature(secret, headerValue(req.headers[SIGNATURE_HEADER]), req.body, { now: req.receivedAt });
  const inner = await startHttpReceiver(
    (req) => (valid(req) ? { status: 200, body: 'ok' } : { status: 401, body: 'bad signature' }),
    (req): ReceivedWebhook => ({
      ...req,
      deliveryId: headerValue(req.headers[DELIVERY_HEADER]),
      signatureValid: valid(req),
    }),
  );
  return {
    ...inner,
    deliveredCounts() {
      const counts = new Map<string, number>();
      for (const r of inner.requests.items) {
        if (r.deliveryId === undefined || r.answered === null || r.answered >= 300) continue;
        counts.set(r.deliveryId, (counts.get(r.deliveryId) ?? 0) + 1);
      }
      return counts;
    },
  };
}

/** Slack incoming webhooks: a JSON POST with `text`, `blocks` or `attachments`; `ok` or `invalid_payload`. */
export function startSlackReceiver(): Promise<HttpReceiver> {
  return startHttpReceiver((req) => {
    const msg = req.json as { text?: unknown; blocks?: unknown; attachments?: unknown } | undefined;
    const valid =
      req.method === 'POST' &&
      msg !== undefined &&
      (typeof msg.text === 'string' || Array.isArray(msg.blocks) || Array.isArray(msg.attachments));
    return valid ? { status: 200, body: 'ok' } : { status: 400, body: 'invalid_payload' };
  });
}

/** A PagerDuty Events API v2 event as the receiver accepted it. */
export interface PagerDutyEvent {
  routing_key: string;
  event_action: 'trigger' | 'acknowledge' | 'resolve';
  dedup_key?: string;
  payload?: { summary: string; source: string; severity: string; [k: string]: unknown };
  [k: string]: unknown;
}

const PD_SEVERITIES = ['critical', 'error', 'warning', 'info'];

/** Why PagerDuty would refuse an event (its 400 answer), or null for a valid one. */
function pagerDutyError(e: PagerDutyEvent | undefined): string | null {
  if (!e || typeof e.routing_key !== 'string' || e.routing_key.length === 0) return 'routing_key is required';
  if (!['trigger', 'acknowledge', 'resolve'].includes(e.event_action))
    return 'event_action must be trigger, acknowledge or resolve';
  if (e.event_action !== 'trigger')
    return typeof e.dedup_key === 'string' && e.dedup_key.length > 0
      ? null
      : 'dedup_key is required to acknowledge or resolve';
  const p = e.payload;
  if (!p || typeof p.summary !== 'string' || typeof p.source !== 'string')
    return 'payload.summary and payload.source are required';
  return PD_SEVERITIES.includes(p.severity) ? null : `payload.severity must be one of ${PD_SEVERITIES.join(', ')}`;
}

/** PagerDuty Events API v2: POST an event, 202 {status: 'success', dedup_key} or 400 {status: 'invalid event'}. */
export function startPagerDutyReceiver(): Promise<HttpReceiver> {
  let generated = 0;
  return startHttpReceiver((req) => {
    const event = req.json as PagerDutyEvent | undefined;
    const error = req.method === 'POST' ? pagerDutyError(event) : 'only POST is accepted';
    if (error)
      return { status: 400, body: { status: 'invalid event', message: 'Event object is invalid', errors: [error] } };
    const dedupKey = event?.dedup_key ?? `generated-${++generated}`;
    return { status: 202, body: { status: 'success', message: 'Event processed', dedup_key: dedupKey } };
  });
}

/** Opsgenie Alert API requests as the receiver read them. */
export interface OpsgenieRequest extends ReceivedRequest {
  action: 'create' | 'close' | 'unknown';
  /** The alias: the body's for a create, the path's for a close. */
  alias: string | undefined;
}

/** Opsgenie's Alert API: POST /v2/alerts and POST /v2/alerts/{alias}/close?identifierType=alias, `Authorization: GenieKey …`. */
export function startOpsgenieReceiver(): Promise<HttpReceiver<OpsgenieRequest>> {
  return startHttpReceiver(opsgenieAnswer, opsgenieRequest);
}

function opsgenieAnswer(req: ReceivedRequest): Answer {
  if (!/^GenieKey \S+$/.test(String(req.headers.authorization ?? '')))
    return { status: 401, body: { message: 'Could not authenticate', took: 0 } };
  const { action } = opsgenieRequest(req);
  const body = req.json as { message?: unknown } | undefined;
  if (action === 'create' && typeof body?.message !== 'string')
    return { status: 422, body: { message: 'Message can not be empty.', took: 0 } };
  if (action === 'unknown')
    return { status: 404, body: { message: `no such endpoint: ${req.method} ${req.url}`, took: 0 } };
  return { status: 202, body: { result: 'Request will be processed', took: 0.01, requestId: crypto.randomUUID() } };
}

/** Reads an Opsgenie request's action and alias from its method, path, query and body. */
export function opsgenieRequest(req: ReceivedRequest): OpsgenieRequest {
  const url = new URL(req.url, 'http://receiver');
  const close = /\/v2\/alerts\/([^/]+)\/close$/.exec(url.pathname);
  if (req.method === 'POST' && close?.[1] && url.searchParams.get('identifierType') === 'alias') {
    return { ...req, action: 'close', alias: decodeURIComponent(close[1]) };
  }
  if (req.method === 'POST' && url.pathname.endsWith('/v2/alerts')) {
    return { ...req, action: 'create', alias: (req.json as { alias?: string } | undefined)?.alias };
  }
  return { ...req, action: 'unknown', alias: undefined };
}

/** An SMS or voice gateway: any JSON POST is accepted (200); the gateway format is the service's (docs/alerting.md). */
export function startGatewayReceiver(): Promise<HttpReceiver> {
  return startHttpReceiver((req) =>
    req.method === 'POST' && req.json !== undefined
      ? { status: 200, body: { status: 'queued' } }
      : { status: 400, body: { message: 'a JSON POST is expected' } },
  );
}

export interface ReceivedEmail extends ParsedMail {
  envelopeFrom: string;
  envelopeTo: string[];
  raw: string;
}

export interface SmtpReceiver {
  url: string;
  mails: Arrivals<ReceivedEmail>;
  /** The next `count` messages are refused with 451 (a temporary failure: the sender should retry). */
  failNext(count: number): void;
  close(): Promise<void>;
}

/** A real SMTP server (smtp-server, plain on loopback) that parses each message's MIME parts. */
export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const mails = new Arrivals<ReceivedEmail>();
  let failures = 0;
  const server = await listenSmtp({
    accept: (mail) => {
      if (failures > 0) {
        failures--;
        return Object.assign(new Error('try again later'), { responseCode: 451 });
      }
      mails.push({ ...parseMail(mail.raw), envelopeFrom: mail.from, envelopeTo: mail.to, raw: mail.raw });
      return undefined;
    },
  });
  return {
    ...server,
    mails,
    failNext: (count) => {
      failures += count;
    },
  };
}
