import fs from 'node:fs';
import path from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import { z } from 'zod';
import { hostingErrors } from '../errors.ts';
import type { AppManifest } from './tables.ts';

// Deploy artifacts: a gzipped tarball of the app folder. Everything here runs before anything live is
// touched, and every problem is a 4xx with a sentence a person can act on.

export const MAX_ARTIFACT_BYTES = 100 * 1024 * 1024;
/** Unpacked size cap, so a small gzip bomb cannot fill the disk. */
export const MAX_UNPACKED_BYTES = 1024 * 1024 * 1024;
const MAX_ENTRIES = 200_000;

const ALLOWED_TYPES = new Set(['File', 'OldFile', 'ContiguousFile', 'Directory', 'SymbolicLink', 'Link']);

/** Streams the artifact to a file, stopping as soon as it passes the size limit. */
export async function saveArtifact(
  body: Readable,
  file: string,
  maxBytes = MAX_ARTIFACT_BYTES,
): Promise<number> {
  let size = 0;
  const limit = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      size += chunk.length;
      if (size > maxBytes) cb(hostingErrors.artifactTooLarge(maxBytes));
      else cb(null, chunk);
    },
  });
  fs.mkdirSync(path.dirname(file), { recursive: true });
  await pipeline(body, limit, fs.createWriteStream(file));
  return size;
}

function isGzip(file: string): boolean {
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(2);
    return fs.readSync(fd, head, 0, 2, 0) === 2 && head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    fs.closeSync(fd);
  }
}

/** The entry's path inside the app folder, or null when it would land outside it. */
export function safeEntryPath(p: string): string | null {
  if (p.startsWith('/') || p.startsWith('\\') || /^[A-Za-z]:/.test(p)) return null;
  const norm = path.posix.normalize(p.replace(/\\/g, '/'));
  if (norm === '..' || norm.startsWith('../') || norm.split('/').includes('..')) return null;
  return norm === '.' || norm === './' ? '' : norm.replace(/^\.\//, '').replace(/\/$/, '');
}

function linkTargetInside(entryPath: string, target: string, hard: boolean): boolean {
  if (target.startsWith('/') || /^[A-Za-z]:/.test(target)) return false;
  // Hard link targets are relative to the archive root, symlink targets to the link's folder.
  const base = hard ? '' : path.posix.dirname(entryPath);
  const resolved = path.posix.normalize(path.posix.join(base, target));
  return !(resolved === '..' || resolved.startsWith('../'));
}

/** Checks every entry of the tarball without writing anything; throws ARTIFACT_INVALID with the first problem. */
export async function checkArtifact(file: string): Promise<{ entries: number; unpackedBytes: number }> {
  if (!isGzip(file))
    throw hostingErrors.artifactInvalid('The artifact is not a gzip-compressed tarball (.tar.gz).');
  let problem: string | null = null;
  let entries = 0;
  let unpackedBytes = 0;
  try {
    await tar.t({
      file,
      strict: true,
      onReadEntry: (entry) => {
        entries++;
        if (problem) return;
        const p = entry.path;
        if (!ALLOWED_TYPES.has(entry.type))
          problem = `'${p}' is a ${entry.type}; only files, folders and links are allowed.`;
        else if (safeEntryPath(p) === null) problem = `'${p}' points outside the app folder.`;
        else if (
          (entry.type === 'SymbolicLink' || entry.type === 'Link') &&
          !linkTargetInside(safeEntryPath(p)!, entry.linkpath ?? '', entry.type === 'Link')
        )
          problem = `The link '${p}' points outside the app folder (${entry.linkpath}).`;
        unpackedBytes += entry.size ?? 0;
        if (!problem && unpackedBytes > MAX_UNPACKED_BYTES)
          problem = `The artifact unpacks to more than ${MAX_UNPACKED_BYTES / 1024 / 1024} MB.`;
        if (!problem && entries > MAX_ENTRIES)
          problem = `The artifact holds more than ${MAX_ENTRIES} entries.`;
        entry.resume();
      },
    });
  } catch (err) {
    if (problem) throw hostingErrors.artifactInvalid(problem);
    throw hostingErrors.artifactInvalid(
      `The artifact is not a readable tarball (${(err as Error).message}).`,
    );
  }
  if (problem) throw hostingErrors.artifactInvalid(problem);
  if (entries === 0) throw hostingErrors.artifactInvalid('The artifact is empty.');
  return { entries, unpackedBytes };
}

/** Extracts a checked artifact into dir (created fresh). */
export async function extractArtifact(file: string, dir: string): Promise<void> {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  await tar.x({ file, cwd: dir, strict: true, preservePaths: false, noChmod: false, preserveOwner: false });
}

const pierJsonSchema = z.object({
  type: z.enum(['static', 'node']).optional(),
  start: z.string().min(1).max(2000).optional(),
  healthPath: z
    .string()
    .regex(/^\/[^\s]*$/, 'must start with /')
    .max(500)
    .optional(),
  spa: z.boolean().optional(),
});

function readJson(file: string, what: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw hostingErrors.artifactInvalid(`${what} is not valid JSON (${(err as Error).message}).`);
  }
}

/** Works out what kind of app an extracted folder holds, from pier.json, package.json and index.html. */
export function detectApp(dir: string): AppManifest {
  const at = (f: string) => path.join(dir, f);
  let cfg: z.infer<typeof pierJsonSchema> = {};
  if (fs.existsSync(at('pier.json'))) {
    const parsed = pierJsonSchema.safeParse(readJson(at('pier.json'), 'pier.json'));
    if (!parsed.success) {
      const i = parsed.error.issues[0]!;
      throw hostingErrors.artifactInvalid(`pier.json: ${i.path.join('.') || 'root'} ${i.message}.`);
    }
    cfg = parsed.data;
  }
  let startScript: string | undefined;
  if (fs.existsSync(at('package.json'))) {
    const pkg = readJson(at('package.json'), 'package.json') as { scripts?: Record<string, unknown> };
    const s = pkg?.scripts?.start;
    if (typeof s === 'string' && s.trim()) startScript = s;
  }
  const hasIndex = fs.existsSync(at('index.html'));
  const type = cfg.type ?? (cfg.start || startScript ? 'node' : hasIndex ? 'static' : undefined);
  if (type === 'node') {
    const start = cfg.start ?? startScript;
    if (!start)
      throw hostingErrors.artifactInvalid(
        'A Node app needs a package.json with a "start" script (or "start" in pier.json).',
      );
    return { type, start, healthPath: cfg.healthPath ?? '/', spa: false };
  }
  if (type === 'static') {
    if (!hasIndex)
      throw hostingErrors.artifactInvalid('A static site needs an index.html at the root of the folder.');
    return { type, healthPath: '/', spa: cfg.spa ?? false };
  }
  throw hostingErrors.artifactInvalid(
    'No recognisable app: add an index.html (static site) or a package.json with a "start" script (Node app).',
  );
}
