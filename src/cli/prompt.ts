import readline from 'node:readline';
import { CliError } from './errors.ts';

export type Input = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
export type Output = { write(s: string): unknown };

/** One line: asked for on a terminal (the prompt goes to stderr), or the first line of piped stdin. */
export async function readLine(stdin: Input, stderr: Output, prompt: string): Promise<string> {
  if (stdin.isTTY) stderr.write(prompt);
  const rl = readline.createInterface({ input: stdin, terminal: false });
  try {
    for await (const line of rl) return line.trim();
    return '';
  } finally {
    rl.close();
  }
}

/**
 * A secret value, never echoed: typed on a terminal with echo off (Enter ends it), or the whole of piped
 * stdin without one trailing newline (so `echo value | pier …` stores `value`).
 */
export async function readSecret(stdin: Input, stderr: Output, prompt: string): Promise<string> {
  if (!stdin.isTTY || !stdin.setRawMode) {
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    return Buffer.concat(chunks)
      .toString('utf8')
      .replace(/\r?\n$/, '');
  }
  const setRawMode = stdin.setRawMode.bind(stdin);
  // Echo goes off before the prompt shows, so nothing typed after seeing the prompt can be echoed.
  setRawMode(true);
  stderr.write(prompt);
  stdin.resume();
  try {
    return await new Promise<string>((resolve, reject) => {
      let value = '';
      const onData = (chunk: Buffer | string) => {
        for (const ch of chunk.toString()) {
          if (ch === '\r' || ch === '\n' || ch === '\u0004') {
            stdin.off('data', onData);
            return resolve(value);
          }
          if (ch === '\u0003') {
            stdin.off('data', onData);
            return reject(new CliError('CANCELLED', 'Cancelled.', 130));
          }
          if (ch === '\u007f' || ch === '\b') value = [...value].slice(0, -1).join('');
          else value += ch;
        }
      };
      stdin.on('data', onData);
    });
  } finally {
    setRawMode(false);
    stdin.pause();
    stderr.write('\n');
  }
}
