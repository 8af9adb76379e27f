/**
 * The one thin CLI: parses the command line and hands over to the agent, the service or the demo.
 * Every bad flag or setting ends in one line on stderr that names it and the fix, with exit code 2.
 */
import { parseArgs } from 'node:util';
import { ConfigError, EXIT } from '../shared/errors.ts';
import { VERSION } from '../shared/version.ts';

const HELP = `outpost ${VERSION}: private location agent and monitoring service

Usage:
  outpost serve                       run the service (public API, job dispatch, scheduler)
  outpost agent                       run the agent daemon (needs API_KEY, a private location key pl_...)
  outpost account create --name NAME  create an account; prints {"accountId": "...", "apiKey": "..."}
  outpost demo [--duration SECONDS]   run the service, an agent and sample checks against a local target
  outpost backup FILE [--force]       copy the live SQLite database of DATA_DIR to FILE (docs/operations.md)
  outpost run CHECK_ID... [--wait]    run checks now through the API (OUTPOST_URL, OUTPOST_API_KEY,
                                      OUTPOST_ACCOUNT_ID); --wait prints each verdict, exits 1 on a failure
  outpost --help | --version

All settings come from environment variables; README.md lists every one.
`;

type Command = (args: string[]) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  async serve(args) {
    rejectArgs('serve', args);
    const { runServe } = await import('./serve.ts');
    return runServe(process.env);
  },
  async agent(args) {
    rejectArgs('agent', args);
    const { runAgent } = await import('../agent/main.ts');
    return runAgent(process.env);
  },
  async account(args) {
    const [sub, ...rest] = args;
    if (sub !== 'create') {
      throw new ConfigError(
        'account',
        `unknown account command ${JSON.stringify(sub ?? '')}; use: outpost account create --name NAME`,
      );
    }
    const { values } = parse('account create', rest, { name: { type: 'string' } });
    if (!values.name) throw new ConfigError('--name', 'account create needs --name NAME (1 to 255 characters)');
    const { runAccountCreate } = await import('./account.ts');
    return runAccountCreate(process.env, values.name);
  },
  async demo(args) {
    const { values } = parse('demo', args, { duration: { type: 'string' } });
    let durationSeconds: number | undefined;
    if (values.duration !== undefined) {
      if (!/^\d+$/.test(values.duration) || Number(values.duration) < 1) {
        throw new ConfigError(
          '--duration',
          `--duration ${JSON.stringify(values.duration)} is not allowed; use a whole number of seconds, at least 1`,
        );
      }
      durationSeconds = Number(values.duration);
    }
    const { runDemo } = await import('./demo.ts');
    return runDemo(process.env, { durationSeconds });
  },
  async backup(args) {
    const { values, positionals } = parse('backup', args, { force: { type: 'boolean' } }, true);
    const usage = 'outpost backup FILE [--force]';
    if (positionals.length === 0)
      throw new ConfigError('FILE', `FILE is missing: ${usage} (the file to write the copy to)`);
    if (positionals.length > 1)
      throw new ConfigError('FILE', `backup takes one FILE, got also ${JSON.stringify(positionals[1])}: ${usage}`);
    const { runBackup } = await import('./backup.ts');
    return runBackup(process.env, positionals[0]!, values.force === true);
  },
  async run(args) {
    const { values, positionals } = parse('run', args, { wait: { type: 'boolean' } }, true);
    if (positionals.length === 0)
      throw new ConfigError(
        'CHECK_ID',
        'CHECK_ID is missing: outpost run CHECK_ID... [--wait] (the ids of the checks to run)',
      );
    const bad = positionals.find((id) => !UUID.test(id));
    if (bad !== undefined)
      throw new ConfigError(
        'CHECK_ID',
        `CHECK_ID ${JSON.stringify(bad)} is not a check id; use the check's UUID (GET /v1/checks lists them)`,
      );
    const { runChecks } = await import('./run.ts');
    return runChecks(process.env, { checkIds: positionals, wait: values.wait === true });
  },
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function parse<T extends Record<string, { type: 'string' | 'boolean' }>>(
  command: string,
  args: string[],
  options: T,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals });
  } catch (err) {
    // parseArgs says e.g. "Unknown option '--nmae'"; keep its words, add which command and where to look.
    const message = err instanceof Error ? err.message.replace(/\.\s.*$/s, '') : String(err);
    throw new ConfigError(command, `${message} for "outpost ${command}"; see outpost --help`);
  }
}

function rejectArgs(command: string, args: string[]): void {
  if (args.length > 0) {
    throw new ConfigError(
      command,
      `"outpost ${command}" takes no arguments (got ${JSON.stringify(args[0])}); it is configured by environment variables, see README.md`,
    );
  }
}

export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    process.stdout.write(HELP);
    return first === undefined ? EXIT.config : EXIT.ok;
  }
  if (first === '--version' || first === '-v') {
    process.stdout.write(`${VERSION}\n`);
    return EXIT.ok;
  }
  const command = COMMANDS[first];
  if (!command) {
    process.stderr.write(
      `outpost: unknown command ${JSON.stringify(first)}; use one of ${Object.keys(COMMANDS).join(', ')} (see outpost --help)\n`,
    );
    return EXIT.config;
  }
  try {
    return await command(rest);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`outpost: ${err.message}\n`);
      return EXIT.config;
    }
    throw err;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    // A configuration error exits at once: a file-system call hung on a bad path (SPOOL_DIR on a dead
    // network mount) must not keep the process alive after the one-line message.
    if (code === EXIT.config) process.exit(code);
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`outpost: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = EXIT.failure;
  },
);
