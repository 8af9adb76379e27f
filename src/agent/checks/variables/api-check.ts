/**
 * Variables in an API check's request, in the fields the reference substitutes them in: the URL,
 * the body, header values, query parameter values and the basic-auth username and password. Header
 * and parameter names, assertions and everything else are used as written, as in the reference.
 * `{{REQUEST_URL}}` is the URL once its own references are substituted (so not in the URL itself).
 */
import type { ApiCheckDefinition } from '../../../shared/checks/types.ts';
import { FieldRenderer } from './fields.ts';
import type { VariableNote } from './notes.ts';
import type { Resolve } from './template.ts';

/**
 * The reference's `{{REQUEST_URL}}`: the request's URL, variables substituted, in every field after
 * the URL itself (a variable of that name wins, as for the other run variables).
 */
function withRequestUrl(resolve: Resolve, url: string): Resolve {
  return (expression) => {
    const answer = resolve(expression);
    return answer.kind === 'unresolved' && expression === 'REQUEST_URL' ? { kind: 'value', value: url } : answer;
  };
}

/** The check with its request's variables substituted, and a note per reference left as written. */
export function substituteApiCheck(
  check: ApiCheckDefinition,
  resolve: Resolve,
): { check: ApiCheckDefinition; notes: VariableNote[] } {
  const req = check.request;
  // A definition without a request is the runner's to report, not ours.
  if (!req) return { check, notes: [] };
  const r = new FieldRenderer(resolve);
  const url = r.text('request.url', req.url);
  r.use(withRequestUrl(resolve, url));
  const request = {
    ...req,
    url,
    body: r.text('request.body', req.body ?? ''),
    headers: r.values('request.headers', req.headers ?? []),
    queryParameters: r.values('request.queryParameters', req.queryParameters ?? []),
    basicAuth: req.basicAuth
      ? {
          username: r.text('request.basicAuth.username', req.basicAuth.username),
          password: r.text('request.basicAuth.password', req.basicAuth.password),
        }
      : req.basicAuth,
  };
  return { check: { ...check, request }, notes: r.notes };
}
