/**
 * What a module logs through. The agent's pino logger and the service's Fastify logger (pino too)
 * both fit, and a test can pass a small stand-in. Each call is an object of fields and a message.
 * A module that logs at fewer levels takes `Pick<Log, ...>`, so a stand-in needs no more than those.
 */
export interface Log {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}
