// Builds the dashboard (web/ → web/dist) when its sources changed since the last build: a content hash of
// every source file is compared with the stamp the last build left in web/dist. `--force` always builds.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const web = path.join(root, 'web');
const dist = path.join(web, 'dist');
const stampFile = path.join(dist, '.source-hash');

function files(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)]))
    .sort();
}

export function webSourceHash(): string {
  const h = crypto.createHash('sha256');
  const inputs = [
    ...files(path.join(web, 'src')),
    path.join(web, 'index.html'),
    path.join(web, 'vite.config.ts'),
    path.join(root, 'package-lock.json'),
  ];
  for (const f of inputs) {
    h.update(path.relative(root, f));
    h.update(fs.readFileSync(f));
  }
  return h.digest('hex');
}

/** Builds web/dist unless its stamp matches the sources; returns whether it built. */
export async function ensureWebBuilt(force = false): Promise<boolean> {
  const hash = webSourceHash();
  const stamp = fs.existsSync(stampFile) ? fs.readFileSync(stampFile, 'utf8').trim() : '';
  if (!force && stamp === hash && fs.existsSync(path.join(dist, 'index.html'))) return false;
  const { build } = await import('vite');
  await build({ configFile: path.join(web, 'vite.config.ts'), logLevel: 'warn', mode: 'production' });
  fs.writeFileSync(stampFile, hash);
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // Vite's JSX transform follows NODE_ENV; the dashboard is always built for production.
  process.env.NODE_ENV = 'production';
  const started = Date.now();
  const built = await ensureWebBuilt(process.argv.includes('--force'));
  console.log(built ? `dashboard built in ${Date.now() - started} ms` : 'dashboard is up to date');
}
