import fs from 'node:fs';
import path from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import { hostingErrors } from '../errors.ts';

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

// Detection lives in detect.ts; re-exported for the callers that unpack and detect in one go.
export { detectApp } from './detect.ts';
