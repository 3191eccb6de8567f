import { CommanderError } from 'commander';
import { PierApiError } from '../sdk/client.ts';

/** A failure of the CLI itself; `exitCode` 2 marks a usage error. */
export class CliError extends Error {
  readonly code: string;
  readonly exitCode: number;
  constructor(code: string, message: string, exitCode = 1) {
    super(message);
    this.code = code;
    this.exitCode = exitCode;
  }
}

export const usageError = (message: string) => new CliError('USAGE', message, 2);

/** Turns anything thrown into the one line printed on stderr and the exit status. */
export function describeFailure(err: unknown): { line: string; exitCode: number } {
  if (err instanceof PierApiError || err instanceof CliError) {
    const exitCode = err instanceof CliError ? err.exitCode : 1;
    return { line: `error ${err.code}: ${oneLine(err.message)}`, exitCode };
  }
  if (err instanceof CommanderError) {
    return { line: `error USAGE: ${oneLine(err.message.replace(/^error:\s*/, ''))}`, exitCode: 2 };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { line: `error INTERNAL: ${oneLine(message)}`, exitCode: 1 };
}

function oneLine(s: string): string {
  return s.replace(/\s*\n\s*/g, ' ').trim();
}
