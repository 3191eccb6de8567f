import os from 'node:os';
import path from 'node:path';

// The CLI's own environment, read once here (the server's config lives in src/config.ts).

export const DEFAULT_URL = 'http://127.0.0.1:8787';

export type CliEnv = {
  /** PIER_URL: the server to talk to; overrides the URL saved by `pier login`. */
  url?: string;
  /** PIER_TOKEN: a personal token; overrides the saved one. */
  token?: string;
  /** PIER_OPERATOR_KEY: the operator key for `pier admin …`. */
  operatorKey?: string;
  /** DATA_DIR (default ./.pier): where the server keeps operator.key when PIER_OPERATOR_KEY is unset. */
  dataDir: string;
  /** The folder of config.json: PIER_CONFIG_DIR, else $XDG_CONFIG_HOME/pier, else ~/.config/pier. */
  configDir: string;
  /** PIER_BROWSER: a command that opens a URL given as its argument (run through sh). */
  browser?: string;
  /** Whether a browser can be opened here (desktop session, not CI, not over SSH). */
  canOpenBrowser: boolean;
  platform: NodeJS.Platform;
  hostname: string;
};

const nonEmpty = (v: string | undefined) => (v && v.trim() !== '' ? v.trim() : undefined);

export function readCliEnv(
  env: Record<string, string | undefined> = process.env,
  platform: NodeJS.Platform = process.platform,
): CliEnv {
  const home = nonEmpty(env.HOME) ?? os.homedir();
  const xdg = nonEmpty(env.XDG_CONFIG_HOME);
  const configDir = nonEmpty(env.PIER_CONFIG_DIR) ?? path.join(xdg ?? path.join(home, '.config'), 'pier');
  const headless =
    nonEmpty(env.CI) !== undefined ||
    nonEmpty(env.SSH_CONNECTION) !== undefined ||
    nonEmpty(env.SSH_TTY) !== undefined ||
    (platform === 'linux' && !nonEmpty(env.DISPLAY) && !nonEmpty(env.WAYLAND_DISPLAY));
  const browser = nonEmpty(env.PIER_BROWSER);
  return {
    url: nonEmpty(env.PIER_URL),
    token: nonEmpty(env.PIER_TOKEN),
    operatorKey: nonEmpty(env.PIER_OPERATOR_KEY),
    dataDir: path.resolve(nonEmpty(env.DATA_DIR) ?? './.pier'),
    configDir: path.resolve(configDir),
    browser,
    // An explicit PIER_BROWSER is a request to use it, whatever the session looks like.
    canOpenBrowser: browser !== undefined || !headless,
    platform,
    hostname: os.hostname(),
  };
}
