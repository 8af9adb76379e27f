/**
 * Error shapes of the public API. Every error body is `{statusCode, error, message}` (the
 * reference's ApiError), whatever went wrong: a thrown HttpError, a schema validation failure,
 * an unknown route or a bug. The typed errors carry no Fastify types, so the store can throw them
 * too (e.g. a 409 for a third location key) without knowing about HTTP handlers.
 */
import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { sendNotFoundPage, wantsHtml } from '../web/not-found.ts';

export interface ApiErrorBody {
  statusCode: number;
  error: string;
  message: string;
}

export class HttpError extends Error {
  readonly statusCode: number;
  constructor(statusCode: number, message: string) {
    super(message);
    this.name = 'HttpError';
    this.statusCode = statusCode;
  }
  toBody(): ApiErrorBody {
    return { statusCode: this.statusCode, error: STATUS_CODES[this.statusCode] ?? 'Error', message: this.message };
  }
}

export class BadRequestError extends HttpError {
  constructor(message: string) {
    super(400, message);
    this.name = 'BadRequestError';
  }
}

export class UnauthorizedError extends HttpError {
  constructor(message: string) {
    super(401, message);
    this.name = 'UnauthorizedError';
  }
}

/** Also used for another account's resources, so their existence is never revealed. */
export class NotFoundError extends HttpError {
  constructor(message: string) {
    super(404, message);
    this.name = 'NotFoundError';
  }
}

export class ConflictError extends HttpError {
  constructor(message: string) {
    super(409, message);
    this.name = 'ConflictError';
  }
}

/** A rate limit was exceeded (http/rate-limits.ts); the error handler sends Retry-After with it. */
export class TooManyRequestsError extends HttpError {
  /** Whole seconds until the limit's window lets this client in again. */
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number) {
    super(429, message);
    this.name = 'TooManyRequestsError';
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Ajv's error objects as Fastify attaches them to a validation error. */
interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/**
 * Turns the first Ajv error into a message that names the field and what is allowed, e.g.
 * `body/request/method must be one of GET, POST, PUT, HEAD, DELETE, PATCH`. Ajv's own text for
 * enums ("must be equal to one of the allowed values") does not say which values those are.
 */
export function formatValidationMessage(issues: readonly ValidationIssue[], context: string | undefined): string {
  // anyOf wraps the errors of its branches (nullable fields); the branch error is more specific.
  const issue = issues.find((i) => i.keyword !== 'anyOf') ?? issues[0];
  if (!issue) return 'Request is invalid';
  const field = [context ?? 'request', ...issue.instancePath.split('/').filter(Boolean)].join('/');
  switch (issue.keyword) {
    case 'required':
      return `${field}/${String(issue.params.missingProperty)} is required`;
    case 'enum':
      return `${field} must be one of ${(issue.params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'type': {
      const types = issue.params.type;
      return `${field} must be ${Array.isArray(types) ? types.join(' or ') : String(types)}`;
    }
    case 'additionalProperties':
      return `${field} must not have property ${String(issue.params.additionalProperty)}`;
    default:
      return `${field} ${issue.message ?? 'is invalid'}`;
  }
}

export function errorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (error instanceof HttpError) {
    if (error instanceof TooManyRequestsError) reply.header('retry-after', String(error.retryAfterSeconds));
    void reply.status(error.statusCode).send(error.toBody());
    return;
  }
  if (error.validation) {
    const body: ApiErrorBody = {
      statusCode: 400,
      error: 'Bad Request',
      message: formatValidationMessage(error.validation as ValidationIssue[], error.validationContext),
    };
    void reply.status(400).send(body);
    return;
  }
  // Fastify's own client errors (malformed JSON, wrong content type, body too large) carry a 4xx
  // status and a message meant for the client.
  const status = error.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    void reply
      .status(status)
      .send({ statusCode: status, error: STATUS_CODES[status] ?? 'Error', message: error.message });
    return;
  }
  // Anything else is our bug: log it in full, tell the client nothing about internals.
  request.log.error({ err: error }, 'request failed');
  void reply.status(500).send({
    statusCode: 500,
    error: 'Internal Server Error',
    message: 'The service failed to handle this request; the error is in its log.',
  } satisfies ApiErrorBody);
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): void {
  // A browser that asks for a page gets the plain 404 page; API clients keep the JSON error.
  if (wantsHtml(request.url, request.headers.accept)) {
    void sendNotFoundPage(reply);
    return;
  }
  void reply.status(404).send({
    statusCode: 404,
    error: 'Not Found',
    message: `No route ${request.method} ${request.url.split('?')[0]}`,
  } satisfies ApiErrorBody);
}
