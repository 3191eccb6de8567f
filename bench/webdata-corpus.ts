// The real-sized corpus of bench/webdata.ts: the Python 3.11 documentation as Debian ships it
// (`python3.11-doc`: 530 Sphinx pages, 50 MB of HTML, 5–750 KB a page, with navigation, code blocks and
// tables; PSF licence, a free licence — /usr/share/doc/python3.11/copyright). Read from the installed
// package when it is there; otherwise the .deb is fetched with `apt-get download` (no root needed) and
// unpacked with `dpkg-deb -x` into a cache under the temp directory, once. Served by a plain local HTTP
// server on 127.0.0.1 (files by path, robots.txt allowing everything), the same for both crawlers.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

const INSTALLED = '/usr/share/doc/python3.11/html';
const CACHE = path.join(os.tmpdir(), 'pier-bench-python-docs');
const UNPACKED = path.join(CACHE, 'usr/share/doc/python3.11/html');

export function pythonDocsRoot(): string {
  if (fs.existsSync(path.join(INSTALLED, 'index.html'))) return INSTALLED;
  if (fs.existsSync(path.join(UNPACKED, 'index.html'))) return UNPACKED;
  fs.mkdirSync(CACHE, { recursive: true });
  execFileSync('apt-get', ['download', 'python3.11-doc'], { cwd: CACHE, stdio: 'inherit' });
  const deb = fs.readdirSync(CACHE).find((f) => f.startsWith('python3.11-doc_') && f.endsWith('.deb'));
  if (!deb) throw new Error('apt-get download python3.11-doc gave no .deb');
  execFileSync('dpkg-deb', ['-x', path.join(CACHE, deb), CACHE], { stdio: 'inherit' });
  return UNPACKED;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.txt': 'text/plain; charset=utf-8',
};

export type Served = { site: string; stats: { pages: number; bytes: number }; close(): void };

export async function serveDir(root: string): Promise<Served> {
  const stats = { pages: 0, bytes: 0 };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/robots.txt') {
      res.setHeader('content-type', 'text/plain');
      return res.end('User-agent: *\nAllow: /\n');
    }
    const rel = decodeURIComponent(url.pathname).replace(/\/$/, '/index.html');
    const file = path.join(root, path.normalize(rel));
    if (!file.startsWith(root) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.statusCode = 404;
      return res.end('not found');
    }
    const body = fs.readFileSync(file);
    const type = TYPES[path.extname(file)] ?? 'application/octet-stream';
    if (type.startsWith('text/html')) {
      stats.pages++;
      stats.bytes += body.length;
    }
    res.setHeader('content-type', type);
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    site: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stats,
    close: () => server.close(),
  };
}
