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
import { createRequire, Module } from 'node:module';
import type * as Undici from 'undici';

const require = createRequire(import.meta.url);

/** The lib/ files this module loads, relative to the undici package; the layout test checks each. */
export const UNDICI_LIB_FILES = {
  Dispatcher: 'undici/lib/dispatcher/dispatcher.js',
  Client: 'undici/lib/dispatcher/client.js',
  ClientH2: 'undici/lib/dispatcher/client-h2.js',
  Agent: 'undici/lib/dispatcher/agent.js',
  EnvHttpProxyAgent: 'undici/lib/dispatcher/env-http-proxy-agent.js',
  api: 'undici/lib/api/index.js',
} as const;

type ConnectH2 = (client: unknown, socket: unknown) => unknown;

/**
 * Defers undici's HTTP/2 half until a connection uses it. client.js requires client-h2.js when it
 * loads, and client-h2.js requires node:http2: memory (BENCHMARKS.md, "Agent memory") in every
 * agent, though only a TLS connection whose server picks h2 in ALPN runs it (undici offers h2
 * by default, and API checks offer it as browsers do: checks/api/connect.ts). So before client.js
 * first loads, a stand-in takes client-h2.js's place in require's cache (Node documents adding and
 * replacing require.cache entries), and the stand-in loads the real file on the first h2 connection. client.js calls client-h2.js's
 * one export, connectH2(client, socket), only then; the layout test checks that this still holds.
 * If client.js is already loaded (something took undici's index first), there is nothing to defer.
 */
function deferHttp2(): void {
  const clientFile = require.resolve(UNDICI_LIB_FILES.Client);
  const h2File = require.resolve(UNDICI_LIB_FILES.ClientH2);
  if (require.cache[clientFile] || require.cache[h2File]) return;
  let real: ConnectH2 | undefined;
  const standIn = new Module(h2File);
  standIn.filename = h2File;
  standIn.loaded = true;
  standIn.exports = function connectH2(client: unknown, socket: unknown): unknown {
    if (!real) {
      delete require.cache[h2File];
      real = require(h2File) as ConnectH2;
    }
    return real(client, socket);
  };
  require.cache[h2File] = standIn;
}
deferHttp2();

const Dispatcher = require(UNDICI_LIB_FILES.Dispatcher) as typeof Undici.Dispatcher;
// What undici's index does first: the request/stream/pipeline/upgrade/connect methods live on
// Dispatcher.prototype. Doing it again after the index has run (tests load both) changes nothing.
Object.assign(Dispatcher.prototype, require(UNDICI_LIB_FILES.api) as object);

export type { Dispatcher } from 'undici';
export const Client = require(UNDICI_LIB_FILES.Client) as typeof Undici.Client;
export const Agent = require(UNDICI_LIB_FILES.Agent) as typeof Undici.Agent;
export const EnvHttpProxyAgent = require(UNDICI_LIB_FILES.EnvHttpProxyAgent) as typeof Undici.EnvHttpProxyAgent;

/** Options of `request`: undici's, with the dispatcher required (the agent never uses the global one). */
export type RequestOptions = Omit<Undici.Dispatcher.RequestOptions, 'origin' | 'path'> & {
  dispatcher: Undici.Dispatcher;
};

/**
 * undici's top-level `request(url, options)` for a given dispatcher: origin and path from the URL, the
 * rest passed on. (The index's version also falls back to a global dispatcher, which loads more.)
 */
export function request(url: string | URL, options: RequestOptions): Promise<Undici.Dispatcher.ResponseData> {
  const u = typeof url === 'string' ? new URL(url) : url;
  const { dispatcher, ...rest } = options;
  return dispatcher.request({ ...rest, origin: u.origin, path: `${u.pathname}${u.search}` });
}
