/**
 * An agent daemon against the protocol stub, for the daemon's tests: the stub, the service client,
 * a result spool in a temp directory and the daemon, each closed by the test's `cleanups` (in
 * reverse order), and a recording logger that the spool and the daemon write to.
 */
import { ServiceClient } from '../../src/agent/client.ts';
import { AgentDaemon, type AgentDaemonOptions } from '../../src/agent/daemon.ts';
import { ResultSpool } from '../../src/agent/spool.ts';
import { recordingLogger, tempDir } from './helpers.ts';
import { ProtocolStub, type StubOptions } from './protocol-stub.ts';

export type Cleanups = Array<() => Promise<unknown>>;

export type StubDaemonOptions = Partial<AgentDaemonOptions> &
  Pick<AgentDaemonOptions, 'runners'> & {
    /** The private location key the client sends. */
    apiKey: string;
    stub?: StubOptions;
    /** Where the spool keeps its files; a new temp directory by default. */
    spoolDir?: string;
  };

/** Starts the stub and makes the daemon (not started); `opts` replace the test settings below. */
export async function startStubDaemon(cleanups: Cleanups, opts: StubDaemonOptions) {
  const { apiKey, stub: stubOptions, spoolDir, ...daemonOptions } = opts;
  const stub = await ProtocolStub.start(stubOptions);
  cleanups.push(() => stub.close());
  const recorder = recordingLogger();
  const client = new ServiceClient({ apiUrl: new URL(stub.url), apiKey });
  cleanups.push(() => client.close());
  const spool = await ResultSpool.open({ dir: spoolDir ?? tempDir(), maxBytes: 10_000_000, log: recorder.log });
  const daemon = new AgentDaemon({
    client,
    spool,
    log: recorder.log,
    uptimeConcurrency: 5,
    jobConcurrency: 1,
    shutdownGraceSeconds: 30,
    useOsDnsResolver: false,
    apiUrl: stub.url,
    // Retries within milliseconds, so a test of failures does not wait out real backoff.
    backoff: { baseMs: 10, capMs: 50 },
    ...daemonOptions,
  });
  cleanups.push(() => daemon.stop('test cleanup'));
  return { stub, client, spool, recorder, daemon };
}
