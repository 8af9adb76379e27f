/**
 * Coordination for one service process (SQLite): it always leads, and run announcements are an
 * in-memory event, since every waiter is in this process.
 */
import { EventEmitter } from 'node:events';
import type { Announced } from '../dispatch/waiters.ts';
import { LeadershipBase } from './leadership-state.ts';
import type { CoordinationLog } from './log.ts';
import type { Coordination, RunSignalListener, RunSignals } from './types.ts';

export class InProcessLeadership extends LeadershipBase {
  start(): Promise<void> {
    return this.state.acquire();
  }

  close(): Promise<void> {
    return this.state.lose();
  }
}

interface SignalEvents {
  announced: [locationId: string, runs: readonly Announced[]];
}

export class InProcessRunSignals implements RunSignals {
  readonly #events = new EventEmitter<SignalEvents>();

  constructor() {
    // One listener per dispatcher; tests build many services in one process.
    this.#events.setMaxListeners(0);
  }

  announce(locationId: string, runs: readonly Announced[]): void {
    this.#events.emit('announced', locationId, runs);
  }

  /** No other replica to tell: this process already applied the change. */
  checkChanged(): void {}

  /** No other replica to tell: this process already poked its worker. */
  workQueued(): void {}

  subscribe(listener: RunSignalListener): () => void {
    const announced = (locationId: string, runs: readonly Announced[]): void => listener.announced?.(locationId, runs);
    this.#events.on('announced', announced);
    return () => this.#events.off('announced', announced);
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {}
}

export function inProcessCoordination(name: string, log: CoordinationLog): Coordination {
  const leadership = new InProcessLeadership(name, log);
  const signals = new InProcessRunSignals();
  return {
    leadership,
    signals,
    start: () => leadership.start(),
    close: () => leadership.close(),
  };
}
