import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';

// Serves a static site straight from its release folder (no process): content types, ETag/304, caching
// (HTML revalidates every time, other files an hour, fingerprinted assets a year) and an optional SPA fallback.

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.xml': 'application/xml; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.wasm': 'application/wasm',
  '.pdf': 'application/pdf',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.mp3': 'audio/mpeg',
  '.webmanifest': 'application/manifest+json',
};

export function contentType(file: string): string {
  return TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * A bundler's content-hashed file: a hex hash, or a base64url one (Vite/Rolldown) that mixes cases or digits,
 * or anything under the folders frameworks keep immutable.
 */
export function fingerprinted(file: string): boolean {
  if (/[\\/](_app[\\/]immutable|_next[\\/]static|_astro)[\\/]/.test(file)) return true;
  const hash = /[.-]([A-Za-z0-9_]{8,})\.[a-z0-9]+$/.exec(path.basename(file))?.[1];
  if (!hash) return false;
  return /^[0-9a-f]+$/i.test(hash)
    ? /\d/.test(hash) || hash.length >= 16
    : /[A-Z]/.test(hash) && /[a-z0-9]/.test(hash);
}

function cacheControl(file: string): string {
  if (/\.html?$/i.test(file)) return 'public, max-age=0, must-revalidate';
  if (fingerprinted(file)) return 'public, max-age=31536000, immutable';
  return 'public, max-age=3600';
}

/** Never served, wherever they are: an app's manifests, lockfiles, dependencies and sources. */
const PRIVATE_NAMES = new Set([
  'package.json',
  'package-lock.json',
  'npm-shrinkwrap.json',
  'pnpm-lock.yaml',
  'yarn.lock',
  'bun.lock',
  'bun.lockb',
  'pier.json',
  'node_modules',
]);

/** Dotfiles (but /.well-known/), the names above, and TSX/JSX sources are not public (`.ts` may be video). */
export function isPrivatePath(rel: string): boolean {
  const parts = rel.split('/').filter(Boolean);
  if (parts.some((p, i) => (p.startsWith('.') && !(i === 0 && p === '.well-known')) || PRIVATE_NAMES.has(p)))
    return true;
  return /\.(tsx|jsx|mts|cts)$/i.test(rel);
}

function resolveFile(root: string, urlPath: string): string | null {
  let rel: string;
  try {
    rel = decodeURIComponent(urlPath.split('?')[0]!);
  } catch {
    return null;
  }
  if (rel.includes('\0') || isPrivatePath(rel.replace(/\\/g, '/'))) return null;
  const full = path.join(root, path.normalize(rel));
  if (full !== root && !full.startsWith(root + path.sep)) return null;
  // A built site's links were made by its build: serveStatic follows none leading out of the folder.
  return findFile(full);
}

function inside(root: string, file: string): boolean {
  try {
    const realRoot = fs.realpathSync(root);
    const real = fs.realpathSync(file);
    return real === realRoot || real.startsWith(realRoot + path.sep);
  } catch {
    return false;
  }
}

function findFile(full: string): string | null {
  try {
    const st = fs.statSync(full);
    if (st.isFile()) return full;
    if (st.isDirectory()) {
      const idx = path.join(full, 'index.html');
      if (fs.statSync(idx, { throwIfNoEntry: false })?.isFile()) return idx;
    }
  } catch {
    // not there
  }
  if (!path.extname(full)) {
    const html = `${full}.html`;
    if (fs.statSync(html, { throwIfNoEntry: false })?.isFile()) return html;
  }
  return null;
}

export function serveStatic(
  root: string,
  spa: boolean,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
    res.end('Method not allowed\n');
    return;
  }
  let file = resolveFile(root, req.url ?? '/');
  let pathname = (req.url ?? '/').split('?')[0]!;
  try {
    pathname = decodeURIComponent(pathname);
  } catch {}
  // A private name (a dotfile, package.json) is a plain 404, never the SPA's page in its place.
  const hidden = isPrivatePath(pathname.replace(/\\/g, '/'));
  let status = 200;
  // The SPA fallback applies to page navigations, not to missing assets (those stay 404).
  if (!file && spa && !hidden && !path.extname((req.url ?? '/').split('?')[0]!))
    file = path.join(root, 'index.html');
  if (!file) {
    const nf = path.join(root, '404.html');
    if (fs.existsSync(nf)) {
      file = nf;
      status = 404;
    } else {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('Not found\n');
      return;
    }
  }
  let st: fs.Stats;
  try {
    if (!inside(root, file)) throw new Error('outside');
    st = fs.statSync(file);
  } catch {
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('Not found\n');
    return;
  }
  const etag = `W/"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`;
  const headers = {
    'content-type': contentType(file),
    'cache-control': cacheControl(file),
    etag,
    'last-modified': st.mtime.toUTCString(),
    'x-content-type-options': 'nosniff',
  };
  if (status === 200 && req.headers['if-none-match'] === etag) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  res.writeHead(status, { ...headers, 'content-length': st.size });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  fs.createReadStream(file)
    .on('error', () => res.destroy())
    .pipe(res);
}
