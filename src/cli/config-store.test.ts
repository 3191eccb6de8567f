import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ConfigStore } from './config-store.ts';
import { createContext } from './context.ts';
import { readCliEnv } from './env.ts';
import { CliError } from './errors.ts';
import { readLine, readSecret } from './prompt.ts';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'pier-cfg-'));
const sink = { write: () => true };

describe('CLI environment and config file', () => {
  it('finds the config folder: PIER_CONFIG_DIR, then XDG_CONFIG_HOME/pier, then ~/.config/pier', () => {
    expect(readCliEnv({ HOME: '/home/a' }).configDir).toBe('/home/a/.config/pier');
    expect(readCliEnv({ HOME: '/home/a', XDG_CONFIG_HOME: '/xdg' }).configDir).toBe('/xdg/pier');
    expect(readCliEnv({ HOME: '/home/a', XDG_CONFIG_HOME: '/xdg', PIER_CONFIG_DIR: '/p' }).configDir).toBe(
      '/p',
    );
  });

  it('opens a browser only in a desktop session, or when PIER_BROWSER says how', () => {
    expect(readCliEnv({ DISPLAY: ':0' }, 'linux').canOpenBrowser).toBe(true);
    expect(readCliEnv({ WAYLAND_DISPLAY: 'wayland-0' }, 'linux').canOpenBrowser).toBe(true);
    expect(readCliEnv({}, 'linux').canOpenBrowser).toBe(false);
    expect(readCliEnv({}, 'darwin').canOpenBrowser).toBe(true);
    expect(readCliEnv({ DISPLAY: ':0', CI: 'true' }, 'linux').canOpenBrowser).toBe(false);
    expect(readCliEnv({ SSH_CONNECTION: '1.2.3.4 5 6.7.8.9 22' }, 'darwin').canOpenBrowser).toBe(false);
    expect(readCliEnv({ CI: '1', PIER_BROWSER: 'firefox' }, 'linux').canOpenBrowser).toBe(true);
  });

  it('writes config.json with mode 0600 in a 0700 folder and reads it back', () => {
    const dir = path.join(tmp(), 'pier');
    const store = new ConfigStore(dir);
    expect(store.read()).toEqual({});
    store.write({ url: 'http://pier.test', token: 'pk.a.b' });
    expect(fs.statSync(store.file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    fs.chmodSync(store.file, 0o644);
    store.update((c) => ({ ...c, token: 'pk.c.d' }));
    expect(fs.statSync(store.file).mode & 0o777).toBe(0o600);
    expect(store.read()).toEqual({ url: 'http://pier.test', token: 'pk.c.d' });
    fs.writeFileSync(store.file, '{nope');
    expect(() => store.read()).toThrow(CliError);
  });

  it('sends a saved token only to the server it came from; PIER_TOKEN and PIER_URL override', () => {
    const dir = tmp();
    new ConfigStore(dir).write({ url: 'http://a.test', token: 'pk.saved.x' });
    const io = { stdin: Readable.from([]), stdout: sink, stderr: sink };
    const ctx = (env: Record<string, string>) =>
      createContext(readCliEnv({ PIER_CONFIG_DIR: dir, ...env }), io);
    expect(ctx({}).url()).toBe('http://a.test');
    expect(ctx({}).userToken()).toEqual({ token: 'pk.saved.x', source: 'config' });
    expect(ctx({ PIER_URL: 'http://b.test/' }).userToken()).toBeNull();
    expect(ctx({ PIER_URL: 'http://b.test', PIER_TOKEN: 'pk.env.y' }).userToken()).toEqual({
      token: 'pk.env.y',
      source: 'env',
    });
  });

  it('reads a line or a secret from piped stdin', async () => {
    expect(await readLine(Readable.from(['bcdf-ghjk\nrest\n']), sink, 'code: ')).toBe('bcdf-ghjk');
    expect(await readLine(Readable.from([]), sink, 'code: ')).toBe('');
    expect(await readSecret(Readable.from(['line one\nline two\n']), sink, '')).toBe('line one\nline two');
    expect(await readSecret(Readable.from(['no newline']), sink, '')).toBe('no newline');
  });
});
