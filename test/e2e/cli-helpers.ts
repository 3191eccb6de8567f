import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Runs the real `pier` command as a child process against a server listening on a real port.

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const NODE24 = path.join(ROOT, 'node_modules/.bin/node');
export const CLI_MAIN = path.join(ROOT, 'src/cli/main.ts');
export const BIN = path.join(ROOT, 'bin/pier.js');
export const FAKE_BROWSER = path.join(ROOT, 'test/e2e/fixtures/fake-browser.ts');

export type Run = { code: number | null; stdout: string; stderr: string };

const homes: string[] = [];

/** A scratch home for one person: its own config folder, and a DATA_DIR with no operator key. */
export function scratchHome(): { home: string; configHome: string; configFile: string; dataDir: string } {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'pier-cli-'));
  homes.push(home);
  const configHome = path.join(home, '.config');
  return {
    home,
    configHome,
    configFile: path.join(configHome, 'pier', 'config.json'),
    dataDir: path.join(home, 'data'),
  };
}

export function removeScratchHomes(): void {
  for (const h of homes.splice(0)) fs.rmSync(h, { recursive: true, force: true });
}

export function runProcess(
  command: string,
  args: string[],
  opts: {
    env: Record<string, string>;
    stdin?: string;
    timeoutMs?: number;
    /** Type `text` once stdout shows `after` (a prompt), like a person would; stdin stays open until then. */
    answer?: { after: string; text: string };
  },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    // Asynchronous on purpose: the server answering the CLI runs in this very process.
    const child = spawn(command, args, { env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let answered = false;
    child.stdout.on('data', (d) => {
      stdout += d;
      if (opts.answer && !answered && stdout.includes(opts.answer.after)) {
        answered = true;
        child.stdin.write(opts.answer.text);
      }
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    if (opts.answer) child.stdin.on('error', () => {});
    else child.stdin.end(opts.stdin ?? '');
  });
}

/** `pier …` with a clean environment: no DISPLAY (so no browser unless PIER_BROWSER), no inherited tokens. */
export function pier(
  args: string[],
  o: {
    url: string;
    home: ReturnType<typeof scratchHome>;
    env?: Record<string, string>;
    stdin?: string;
    timeoutMs?: number;
  },
): Promise<Run> {
  return runProcess(NODE24, [CLI_MAIN, ...args], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: o.home.home,
      XDG_CONFIG_HOME: o.home.configHome,
      DATA_DIR: o.home.dataDir,
      PIER_URL: o.url,
      ...o.env,
    },
    stdin: o.stdin,
    timeoutMs: o.timeoutMs,
  });
}

/** The same in a pseudo-terminal (util-linux `script`), for prompts that behave differently on a TTY. */
export function pierOnTty(
  args: string[],
  o: { url: string; home: ReturnType<typeof scratchHome>; env?: Record<string, string> },
  answer: { after: string; text: string },
): Promise<Run> {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [NODE24, CLI_MAIN, ...args].map(quote).join(' ');
  return runProcess('script', ['-qec', command, '/dev/null'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: o.home.home,
      XDG_CONFIG_HOME: o.home.configHome,
      PIER_URL: o.url,
      ...o.env,
    },
    answer,
  });
}

export function json<T = unknown>(run: Run): T {
  if (run.code !== 0) throw new Error(`pier failed (${run.code}): ${run.stderr}`);
  return JSON.parse(run.stdout) as T;
}
