import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { fixtures, packDir } from '../../../../test/hosting.ts';
import { makeTarGz, type TarEntry } from '../../../../test/tarball.ts';
import { ApiError } from '../../../core/errors.ts';
import { checkArtifact, detectApp, extractArtifact, safeEntryPath, saveArtifact } from './artifact.ts';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'pier-art-'));

function write(buf: Buffer): string {
  const f = path.join(tmp(), 'a.tar.gz');
  fs.writeFileSync(f, buf);
  return f;
}

async function problem(entries: TarEntry[] | Buffer): Promise<ApiError> {
  const file = write(Buffer.isBuffer(entries) ? entries : makeTarGz(entries));
  const err = await checkArtifact(file).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('artifact checks', () => {
  it('accepts a packed static site and finds what it is', async () => {
    const file = write(await packDir(path.join(fixtures, 'static-site')));
    await checkArtifact(file);
    const dir = tmp();
    await extractArtifact(file, dir);
    expect(fs.existsSync(path.join(dir, 'index.html'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'secret.txt'))).toBe(false); // .pierignore
    expect(detectApp(dir)).toEqual({ type: 'static', healthPath: '/', spa: true, kind: 'static' });
  });

  it('refuses what is not a gzip tarball', async () => {
    const e1 = await problem(Buffer.from('PK\x03\x04 this is a zip'));
    expect(e1.code).toBe('ARTIFACT_INVALID');
    expect(e1.message).toMatch(/not a gzip/);
    const e2 = await problem(Buffer.from([0x1f, 0x8b, 0x08, 0, 1, 2, 3]));
    expect(e2.message).toMatch(/not a readable tarball/);
  });

  it('refuses entries escaping the folder', async () => {
    const ok = { path: 'index.html', body: '<h1>x</h1>' };
    expect((await problem([ok, { path: '../evil.txt', body: 'x' }])).message).toMatch(
      /outside the app folder/,
    );
    expect((await problem([ok, { path: 'a/../../evil', body: 'x' }])).message).toMatch(/outside/);
    expect((await problem([ok, { path: '/etc/cron.d/evil', body: 'x' }])).message).toMatch(/outside/);
    expect((await problem([ok, { path: 'link', type: 'symlink', linkpath: '/etc/passwd' }])).message).toMatch(
      /link 'link' points outside/,
    );
    expect((await problem([ok, { path: 'a/link', type: 'symlink', linkpath: '../../x' }])).message).toMatch(
      /points outside/,
    );
    expect((await problem([ok, { path: 'hard', type: 'link', linkpath: '../x' }])).message).toMatch(
      /outside/,
    );
    expect((await problem([ok, { path: 'pipe', type: 'fifo' }])).message).toMatch(/only files, folders/);
  });

  it('allows links that stay inside', async () => {
    const file = write(
      makeTarGz([
        { path: 'index.html', body: 'hi' },
        { path: 'a', type: 'dir' },
        { path: 'a/home.html', type: 'symlink', linkpath: '../index.html' },
      ]),
    );
    await expect(checkArtifact(file)).resolves.toMatchObject({ entries: 3 });
  });

  it('stops reading past the size limit', async () => {
    const big = Readable.from([Buffer.alloc(600), Buffer.alloc(600)]);
    const err = await saveArtifact(big, path.join(tmp(), 'x'), 1000).catch((e: unknown) => e);
    expect((err as ApiError).code).toBe('ARTIFACT_TOO_LARGE');
    expect((err as ApiError).status).toBe(413);
  });

  it('names what is missing when there is no recognisable app', () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'README.md'), 'hi');
    expect(() => detectApp(dir)).toThrow(/No recognisable app/);
    fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"x"}');
    expect(() => detectApp(dir)).toThrow(/No recognisable app/);
    fs.writeFileSync(path.join(dir, 'pier.json'), '{"type":"node"}');
    expect(() => detectApp(dir)).toThrow(/"start" script/);
    fs.writeFileSync(path.join(dir, 'pier.json'), '{"healthPath":"nope"}');
    expect(() => detectApp(dir)).toThrow(/pier.json: healthPath/);
    fs.writeFileSync(path.join(dir, 'pier.json'), '{"start":"node s.js","healthPath":"/up"}');
    expect(detectApp(dir)).toMatchObject({ type: 'node', start: 'node s.js', healthPath: '/up', spa: false });
  });

  it('normalises entry paths', () => {
    expect(safeEntryPath('./a/b.txt')).toBe('a/b.txt');
    expect(safeEntryPath('./')).toBe('');
    expect(safeEntryPath('a/./b/')).toBe('a/b');
    expect(safeEntryPath('C:/x')).toBeNull();
  });
});
