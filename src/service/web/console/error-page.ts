/**
 * The console's answer to a refused request, as a page rather than the API's JSON: a form without a
 * valid CSRF token, a filter or cursor that is not valid. Server faults keep the API's handler, which
 * logs them.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { errorHandler, formatValidationMessage, HttpError } from '../../http/errors.ts';
import { html } from '../html.ts';
import { renderPage } from '../layout.ts';
import { setPageHeaders } from '../page-headers.ts';

type ValidationIssues = Parameters<typeof formatValidationMessage>[0];

export const FORM_REFUSED =
  'This form was refused: it did not come from a page of this console, or the page is too old. Go back, reload the page and try again.';

function messageOf(error: FastifyError): string | undefined {
  if (error.code?.startsWith('FST_CSRF_')) return FORM_REFUSED;
  if (error instanceof HttpError) return error.message;
  if (error.validation) return formatValidationMessage(error.validation as ValidationIssues, error.validationContext);
  return error.statusCode !== undefined && error.statusCode < 500 ? error.message : undefined;
}

export function consoleErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const message = messageOf(error);
  if (message === undefined) {
    errorHandler(error, request, reply);
    return;
  }
  const status = error.validation ? 400 : (error.statusCode ?? 400);
  const body = renderPage({
    title: 'Request refused · Outpost',
    bodyClass: 'console',
    children: html`<main id="main" class="narrow">
      <h1>Request refused</h1>
      <p role="alert">${message}</p>
      <p><a href="/app/checks">Back to the checks</a></p>
    </main>`,
  });
  void setPageHeaders(reply.status(status)).send(body);
}
