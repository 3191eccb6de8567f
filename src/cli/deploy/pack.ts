import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import * as tar from 'tar';

// `pier deploy` packs the app folder into a .tar.gz. .gitignore and .pierignore (at the folder's root) are
// honoured, with one exception: node_modules is packed even when .gitignore lists it, because apps bring their
// dependencies (Pier installs nothing); list it in .pierignore to leave it out. .git and .pier never go.

const ALWAYS_OUT = ['.git', '.pier', '.DS_Store'];

function loadIgnore(file: string): Ignore | null {
  if (!fs.existsSync(file)) return null;
  return ignore().add(fs.readFileSync(file, 'utf8'));
}

/** The files to pack, relative to dir, in a stable order. */
export function listAppFiles(dir: string): string[] {
  const git = loadIgnore(path.join(dir, '.gitignore'));
  const pier = loadIgnore(path.join(dir, '.pierignore'));
  const out: string[] = [];
  const excluded = (rel: string, isDir: boolean) => {
    const p = isDir ? `${rel}/` : rel;
    if (ALWAYS_OUT.includes(path.basename(rel))) return true;
    if (pier?.ignores(p)) return true;
    const inModules = rel === 'node_modules' || rel.startsWith('node_modules/');
    return !inModules && !!git?.ignores(p);
  };
  const walk = (rel: string) => {
    const abs = path.join(dir, rel);
    for (const ent of fs
      .readdirSync(abs, { withFileTypes: true })
      .sort((a, b) => a.name.localeCompare(b.name))) {
      const r = rel ? `${rel}/${ent.name}` : ent.name;
      const isDir = ent.isDirectory();
      if (excluded(r, isDir)) continue;
      if (isDir) walk(r);
      else if (ent.isFile() || ent.isSymbolicLink()) out.push(r);
    }
  };
  walk('');
  return out;
}

/** Packs dir into a temporary .tar.gz; the caller removes it. */
export async function packApp(dir: string): Promise<{ file: string; bytes: number; files: number }> {
  const abs = path.resolve(dir);
  if (!fs.statSync(abs, { throwIfNoEntry: false })?.isDirectory()) throw new Error(`${dir} is not a folder.`);
  const files = listAppFiles(abs);
  if (!files.length) throw new Error(`${dir} holds no files to deploy.`);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pier-deploy-')), 'app.tar.gz');
  await tar.c({ gzip: true, file, cwd: abs, portable: true, noDirRecurse: true }, files);
  return { file, bytes: fs.statSync(file).size, files: files.length };
}
