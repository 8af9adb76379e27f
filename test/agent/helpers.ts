/** Shared bits for the agent daemon tests: a logger that records lines, temp dirs, JSON servers. */
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { ErrorSink } from '../../src/agent/logger.ts';
import { createAgentLogger, type Logger } from '../../src/agent/logger.ts';
import type { SubmitResultRequest } from '../../src/shared/protocol.ts';
import { passingRunResult } from '../support/results-run-result.ts';

export interface RecordedLogger {
  log: Logger;
  lines: Array<Record<string, unknown>>;
  raw: string[];
}

export function recordingLogger(errorSink?: ErrorSink, level: 'DEBUG' | 'INFO' = 'DEBUG'): RecordedLogger {
  const lines: Array<Record<string, unknown>> = [];
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      const text = chunk.toString();
      raw.push(text);
      for (const line of text.split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      cb();
    },
  });
  const log = createAgentLogger({ level, destination: stream, errorSink });
  return { log, lines, raw };
}

export function tempDir(prefix = 'outpost-agent-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface JsonServer {
  url: string;
  port: number;
  server: http.Server;
  requests: Array<{ method: string; path: string; headers: http.IncomingHttpHeaders; body: string }>;
  close(): Promise<void>;
}

/** A loopback node:http server; `handle` answers each request (body already read). */
export async function startServer(
  handle: (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void | Promise<void>,
  port = 0,
): Promise<JsonServer> {
  const requests: JsonServer['requests'] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString();
    requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
    try {
      await handle(req, body, res);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    }
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    server,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** A small passing API result as the agent submits it (what the spool and the deliverer carry). */
export function submitRequest(runId: string): SubmitResultRequest {
  return {
    agentId: 'a',
    leaseId: `lease-${runId}`,
    result: passingRunResult({
      runId,
      checkId: 'c1',
      startedAt: '2026-01-01T00:00:00.000Z',
      stoppedAt: '2026-01-01T00:00:01.000Z',
      responseTime: 1,
      agent: { id: 'a', version: '0' },
    }),
  };
}
