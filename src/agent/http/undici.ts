/**
 * The parts of undici the agent uses, and nothing else. Every agent module takes undici from here,
 * never from 'undici' itself.
 *
 * Why: undici's index loads all of undici — fetch, WebSocket, EventSource, the cache interceptor and
 * its SQLite store, mock agents, web streams and worker_threads — which costs an idle agent about
 * 12 MB of RSS (BENCHMARKS.md, "Agent memory") for code it never runs. undici has no package "exports"
 * map, so its lib/ files can be required directly; that ties us to undici's internal layout, so this is
 * the one module that does it, and test/agent/undici-layout.test.ts fails loudly (naming the file)
 * if an undici upgrade moves or renames any of them.
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

const require = createRequire(import.meta.url);

/** The lib/ files this module loads, relative to the undici package; the layout test checks each. */
export const UNDICI_LIB_FILES = {
  Dispatcher: 'undici/lib/dispatcher/dispatcher.js',
  Client: 'undici/lib/dispatcher/client.js',
  Agent: 'undici/lib/dispatcher/agent.js',
  EnvHttpProxyAgent: 'undici/lib/dispatcher/env-http-proxy-agent.js',
  api: 'undici/lib/api/index.js',
} as const;

const Dispatcher = require(UNDICI_LIB_FILES.Dispatcher) as typeof Undici.Dispatcher;
// What undici's index does first: the request/stream/pipeline/upgrade/connect methods live on
// Dispatcher.prototype. Doing it again after the index has run (tests load both) changes nothing.
Object.assign(Dispatcher.prototype, require(UNDICI_LIB_FILES.api) as object);

export type { Dispatcher } from 'undici';
export const Client = require(UNDICI_LIB_FILES.Client) as typeof Undici.Client;
export const Agent = require(UNDICI_LIB_FILES.Agent) as typeof Undici.Agent;
export const EnvHttpProxyAgent = require(UNDICI_LIB_FILES.EnvHttpProxyAgent) as typeof Undici.EnvHttpProxyAgent;

/** Options of `request`: undici's, with the dispatcher required (the agent never uses the global one). */
export type RequestOptions = Omit<Undici.Dispatcher.RequestOptions, 'origin' | 'path'> & { dispatcher: Undici.Dispatcher };

/**
 * undici's top-level `request(url, options)` for a given dispatcher: origin and path from the URL, the
 * rest passed on. (The index's version also falls back to a global dispatcher, which loads more.)
 */
export function request(url: string | URL, options: RequestOptions): Promise<Undici.Dispatcher.ResponseData> {
  const u = typeof url === 'string' ? new URL(url) : url;
  const { dispatcher, ...rest } = options;
  return dispatcher.request({ ...rest, origin: u.origin, path: `${u.pathname}${u.search}` });
}
