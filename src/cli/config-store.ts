import fs from 'node:fs';
import path from 'node:path';
import { CliError } from './errors.ts';

/** What `pier login` saves: the server and a personal token for it. */
export type SavedConfig = {
  url?: string;
  token?: string;
  user?: { id: string; email: string };
  label?: string;
};

/** config.json in the CLI's config folder; the file is mode 0600 and its folder 0700 (it holds a token). */
export class ConfigStore {
  readonly file: string;

  constructor(configDir: string) {
    this.file = path.join(configDir, 'config.json');
  }

  read(): SavedConfig {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw new CliError('CONFIG_UNREADABLE', `Cannot read ${this.file}: ${(err as Error).message}`);
    }
    try {
      const parsed = JSON.parse(text) as unknown;
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      return parsed as SavedConfig;
    } catch {
      throw new CliError('CONFIG_INVALID', `${this.file} is not valid JSON; fix or delete it.`);
    }
  }

  write(config: SavedConfig): void {
    const dir = path.dirname(this.file);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Written to a private temporary file and renamed, so the token is never readable by others, even briefly.
    const tmp = `${this.file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
    fs.chmodSync(tmp, 0o600);
    fs.renameSync(tmp, this.file);
  }

  update(change: (c: SavedConfig) => SavedConfig): SavedConfig {
    const next = change(this.read());
    this.write(next);
    return next;
  }
}
