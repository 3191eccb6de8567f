import { Command, CommanderError } from 'commander';
import { commandGroups } from './commands/index.ts';
import { type CliContext, type CliIo, createContext } from './context.ts';
import { type CliEnv, readCliEnv } from './env.ts';
import { describeFailure } from './errors.ts';
import { explainFailure } from './explain.ts';

export const VERSION = '0.1.0';

/** The whole `pier` program: global options, then every command group's commands. */
export function buildProgram(env: CliEnv, io: CliIo, ctx: CliContext = createContext(env, io)): Command {
  const program = new Command('pier')
    .description('Pier: deploy and run small business apps')
    .version(VERSION, '-v, --version')
    .option('--json', 'print machine-readable JSON')
    .showHelpAfterError(false)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      // Failures are printed once, as `error CODE: message`, by runCli.
      outputError: () => {},
    });
  for (const group of commandGroups) group.register(program, ctx);
  return program;
}

/** Runs one command line and returns the exit status; never throws and never exits the process. */
export async function runCli(
  argv: string[],
  io: CliIo = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
  env: CliEnv = readCliEnv(),
): Promise<number> {
  const ctx = createContext(env, io);
  const program = buildProgram(env, io, ctx);
  try {
    if (argv.length === 0) {
      program.outputHelp();
      return 0;
    }
    await program.parseAsync(argv, { from: 'user' });
    // A command that failed without throwing (a deployment that ended `failed`, a domain still pending) sets
    // its context's exit code: per run, so runs in one process (tests) never see each other's status.
    return ctx.exitCode;
  } catch (err) {
    // --help and --version end through exitOverride with status 0.
    if (err instanceof CommanderError && err.exitCode === 0) return 0;
    // A command group run without a subcommand has printed its help on stderr: a usage error.
    if (err instanceof CommanderError && err.code === 'commander.help') return 2;
    const { line, exitCode } = describeFailure(await explainFailure(err, ctx));
    io.stderr.write(`${line}\n`);
    return exitCode;
  }
}
