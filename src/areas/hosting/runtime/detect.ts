import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { hostingErrors } from '../errors.ts';
import { PNPM_VERSION, pnpmCommands, pnpmReadsLockfile, pnpmVersionOf } from './pnpm.ts';
import type { AppManifest, DetectedKind } from './tables.ts';

// Works out what an extracted release holds and how it is built and started, from the app's own files:
// pier.json (or package.json#pier) first, then the framework its package.json depends on, then its scripts.
// The rules are the table in docs/hosting.md ("Detection"); keep the two in step.

export const NPM_CI = 'npm ci --include=dev --prefer-offline --no-audit --no-fund --loglevel=warn';
export const NPM_PRUNE = 'npm prune --omit=dev --no-audit --no-fund --loglevel=warn';

/**
 * Whether `npm prune --omit=dev` would keep anything: with no dependencies (SvelteKit's adapter-node bundles
 * everything into build/, so its scaffold lists only devDependencies) it would empty node_modules, which a plain
 * removal does in a fraction of the time.
 */
function hasRuntimeDeps(pkg: { dependencies?: object; optionalDependencies?: object } | null): boolean {
  return (
    Object.keys(pkg?.dependencies ?? {}).length + Object.keys(pkg?.optionalDependencies ?? {}).length > 0
  );
}

const pierConfigSchema = z.object({
  type: z.enum(['static', 'node']).optional(),
  start: z.string().min(1).max(2000).optional(),
  build: z.string().min(1).max(2000).optional(),
  installCommand: z.string().min(1).max(2000).optional(),
  outputDir: z
    .string()
    .min(1)
    .max(300)
    .refine((p) => !p.startsWith('/') && !p.split(/[\\/]/).includes('..'), 'must stay inside the app folder')
    .optional(),
  node: z.string().min(1).max(50).optional(),
  healthPath: z
    .string()
    .regex(/^\/[^\s]*$/, 'must start with /')
    .max(500)
    .optional(),
  spa: z.boolean().optional(),
});
type PierConfig = z.infer<typeof pierConfigSchema>;

type PackageJson = {
  scripts?: Record<string, unknown>;
  dependencies?: Record<string, unknown>;
  devDependencies?: Record<string, unknown>;
  optionalDependencies?: Record<string, unknown>;
  packageManager?: unknown;
  pier?: unknown;
};

function readJson(file: string, what: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw hostingErrors.artifactInvalid(`${what} is not valid JSON (${(err as Error).message}).`);
  }
}

function parseConfig(raw: unknown, what: string): PierConfig {
  const parsed = pierConfigSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const i = parsed.error.issues[0]!;
  throw hostingErrors.artifactInvalid(`${what}: ${i.path.join('.') || 'root'} ${i.message}.`);
}

/**
 * Pier has one Node (its own). A requested version is accepted when that Node satisfies it: `24`, `24.x`,
 * `^24.1`, `~24`, `>=20`, `lts`; anything else is refused with the version there is.
 */
export function checkNodeVersion(wanted: string, current = process.versions.node): string | null {
  const have = Number(current.split('.')[0]);
  const w = wanted.trim().replace(/^v/, '');
  if (w === 'lts' || w === '*' || w === 'latest') return null;
  const atLeast = /^>=?\s*v?(\d+)/.exec(w);
  if (atLeast) return have >= Number(atLeast[1]) ? null : refuse();
  const major = /^[\^~=]?\s*v?(\d+)(?:[.x\d]*)$/.exec(w);
  if (major && Number(major[1]) === have) return null;
  return refuse();
  function refuse() {
    return `node "${wanted}": Pier runs every app on Node ${current} (the only Node it has); ask for "${have}" or drop the setting.`;
  }
}

const OTHER_LOCKFILES: [string, string][] = [
  ['yarn.lock', 'Yarn'],
  ['bun.lockb', 'Bun'],
  ['bun.lock', 'Bun'],
];

/** pnpm for an app with a pnpm-lock.yaml: the version its packageManager names, else Pier's; refused below 9. */
function pnpmFor(pkg: { packageManager?: unknown }) {
  const named = typeof pkg.packageManager === 'string' && pkg.packageManager.startsWith('pnpm@');
  const version = pnpmVersionOf(pkg.packageManager) ?? PNPM_VERSION;
  if (named && !pnpmVersionOf(pkg.packageManager))
    throw hostingErrors.artifactInvalid(
      `packageManager "${String(pkg.packageManager).slice(0, 80)}": name an exact pnpm version (pnpm@10.12.1) or drop it.`,
    );
  if (!pnpmReadsLockfile(version))
    throw hostingErrors.artifactInvalid(
      `packageManager "pnpm@${version}": Pier builds with pnpm 9 or later (lockfile 9.0); upgrade the lockfile (pnpm install with pnpm 9+) or include a package-lock.json.`,
    );
  return { name: `pnpm@${version}`, ...pnpmCommands(version) };
}

function framework(deps: Record<string, unknown>): DetectedKind | null {
  if (deps.next) return 'next';
  if (deps['@sveltejs/kit']) return 'sveltekit';
  if (deps.nuxt) return 'nuxt';
  if (deps['@react-router/dev'] || deps['@remix-run/dev']) return 'remix';
  if (deps.astro) return 'astro';
  if (deps.vite) return 'vite';
  return null;
}

/** What a framework's build leaves behind: when it is packed, the packed node_modules are used as they are. */
const BUILD_OUTPUT: Record<DetectedKind, string> = {
  vite: 'dist/index.html',
  astro: 'dist',
  sveltekit: 'build',
  next: '.next',
  nuxt: '.output',
  remix: 'build',
  'node-start': '',
  static: '',
  prebuilt: '',
};

/** The server entry a framework's Node build produces, when the app has no start script of its own. */
function frameworkStart(kind: DetectedKind | null, deps: Record<string, unknown>): string | undefined {
  if (kind === 'next') return 'next start';
  if (kind === 'sveltekit' && deps['@sveltejs/adapter-node']) return 'node build';
  if (kind === 'nuxt') return 'node .output/server/index.mjs';
  if (kind === 'remix' && deps['@react-router/serve']) return 'react-router-serve ./build/server/index.js';
  if (kind === 'remix' && deps['@remix-run/serve']) return 'remix-serve ./build/index.js';
  if (kind === 'astro' && deps['@astrojs/node']) return 'node ./dist/server/entry.mjs';
  return undefined;
}

/** Where a static build's output is looked for, in order. */
function outputCandidates(kind: DetectedKind | null): string[] {
  if (kind === 'vite' || kind === 'astro') return ['dist'];
  if (kind === 'sveltekit') return ['build'];
  if (kind === 'nuxt') return ['.output/public', 'dist'];
  if (kind === 'next') return ['out'];
  return ['dist', 'build', 'out', 'public'];
}

/** Packages whose command a start may name; such a start keeps the dev dependencies (no prune). */
const BIN_PACKAGE: Record<string, string> = {
  'react-router-serve': '@react-router/serve',
  'remix-serve': '@remix-run/serve',
  'svelte-kit': '@sveltejs/kit',
};

function startNeedsDevDeps(start: string, devDeps: Record<string, unknown>): boolean {
  const words = start.trim().split(/\s+/);
  const bin = words[0] === 'npx' ? words.find((w, i) => i > 0 && !w.startsWith('-')) : words[0];
  if (!bin) return false;
  return bin in devDeps || (BIN_PACKAGE[bin] ?? '') in devDeps;
}

/** Works out what kind of app an extracted folder holds and how it is built; throws ARTIFACT_INVALID. */
export function detectApp(dir: string): AppManifest {
  const at = (f: string) => path.join(dir, f);
  const pkg = fs.existsSync(at('package.json'))
    ? (readJson(at('package.json'), 'package.json') as PackageJson | null)
    : null;
  let cfg: PierConfig = {};
  if (pkg?.pier !== undefined) cfg = parseConfig(pkg.pier, 'package.json "pier"');
  if (fs.existsSync(at('pier.json')))
    cfg = { ...cfg, ...parseConfig(readJson(at('pier.json'), 'pier.json'), 'pier.json') };
  if (cfg.node) {
    const refused = checkNodeVersion(cfg.node);
    if (refused) throw hostingErrors.artifactInvalid(refused);
  }
  const deps = { ...(pkg?.dependencies ?? {}), ...(pkg?.devDependencies ?? {}) };
  const devDeps = pkg?.devDependencies ?? {};
  const scripts = pkg?.scripts ?? {};
  const script = (n: string) =>
    typeof scripts[n] === 'string' && scripts[n].trim() ? scripts[n] : undefined;
  const hasModules = fs.existsSync(at('node_modules'));
  const npmLock = fs.existsSync(at('package-lock.json')) || fs.existsSync(at('npm-shrinkwrap.json'));
  const pnpm = pkg && !hasModules && !npmLock && fs.existsSync(at('pnpm-lock.yaml')) ? pnpmFor(pkg) : null;
  if (pkg && !hasModules && !npmLock && !pnpm && !cfg.installCommand)
    for (const [file, tool] of OTHER_LOCKFILES)
      if (fs.existsSync(at(file)))
        throw hostingErrors.artifactInvalid(
          `${file}: building with ${tool} is not supported yet; include a package-lock.json (npm install --package-lock-only) or bring node_modules.`,
        );
  const kind = pkg ? framework(deps) : null;
  // `pier deploy` packs node_modules even when .gitignore lists it, but not the build output (.gitignore lists
  // dist/ too): a framework app packed from its working folder still needs its build, on this platform.
  const unbuilt =
    hasModules && npmLock && !!kind && !!script('build') && !fs.existsSync(at(BUILD_OUTPUT[kind]));
  const fromSource = !!pkg && (!hasModules || unbuilt) && (npmLock || !!pnpm || !!cfg.installCommand);
  const build = fromSource ? (cfg.build ?? (script('build') ? 'npm run build' : undefined)) : undefined;
  // A dev server's preview is not a production server: such apps are served as the static files they build.
  let startScript = script('start');
  if (startScript && (kind === 'vite' || kind === 'astro') && /^(vite|astro)\s+preview\b/.test(startScript))
    startScript = undefined;
  const start = cfg.start ?? startScript ?? frameworkStart(kind, deps);
  const hasIndex = fs.existsSync(at('index.html'));
  const staticBuild = !!build && !start && kind !== 'next';
  const type = cfg.type ?? (start ? 'node' : hasIndex || staticBuild || cfg.outputDir ? 'static' : undefined);
  const healthPath = cfg.healthPath ?? '/';
  const install = fromSource ? (cfg.installCommand ?? pnpm?.install ?? NPM_CI) : undefined;
  const pm = pnpm && fromSource ? { packageManager: pnpm.name, prune: pnpm.prune } : null;
  const detected: DetectedKind =
    kind ?? (hasModules ? 'prebuilt' : type === 'node' ? 'node-start' : 'static');
  if (type === 'node') {
    if (!start)
      throw hostingErrors.artifactInvalid(
        'A Node app needs a package.json with a "start" script (or "start" in pier.json).',
      );
    return {
      type,
      start,
      healthPath,
      spa: false,
      kind: detected,
      commands: { install, build, start, ...(pm ? { prune: pm.prune } : {}) },
      ...(pm ? { packageManager: pm.packageManager } : {}),
      keepDevDeps: fromSource && startNeedsDevDeps(start, devDeps),
      ...(unbuilt ? { replaceModules: true } : {}),
      ...(fromSource && !hasRuntimeDeps(pkg) ? { noRuntimeDeps: true } : {}),
    };
  }
  if (type === 'static') {
    const base = { type, healthPath, spa: cfg.spa ?? kind === 'vite', kind: detected };
    if (build)
      return {
        ...base,
        ...(unbuilt ? { replaceModules: true } : {}),
        commands: { install, build },
        ...(pm ? { packageManager: pm.packageManager } : {}),
        outputDirs: cfg.outputDir ? [cfg.outputDir] : outputCandidates(kind),
      };
    // A framework's output packed as built (dist/ kept in the artifact): serve that, not the sources beside it.
    const root =
      cfg.outputDir ??
      (kind ? outputCandidates(kind).find((d) => fs.existsSync(at(`${d}/index.html`))) : '') ??
      '';
    if (!fs.existsSync(path.join(dir, root, 'index.html')))
      throw hostingErrors.artifactInvalid(
        root
          ? `outputDir "${root}" has no index.html.`
          : 'A static site needs an index.html at the root of the folder.',
      );
    return { ...base, ...(root ? { root } : {}), ...(install ? { commands: { install } } : {}) };
  }
  throw hostingErrors.artifactInvalid(
    'No recognisable app: add an index.html (static site) or a package.json with a "start" script (Node app).',
  );
}

/** After a static build: the first candidate folder with an index.html becomes the served root. */
export function resolveStaticRoot(dir: string, manifest: AppManifest): AppManifest {
  if (manifest.type !== 'static' || !manifest.outputDirs) return manifest;
  const found = manifest.outputDirs.find((d) => fs.existsSync(path.join(dir, d, 'index.html')));
  if (!found)
    throw new Error(
      `The build finished but left no index.html in ${manifest.outputDirs.join(', ')}; set "outputDir" in pier.json to the folder it builds into.`,
    );
  const real = fs.realpathSync(path.join(dir, found));
  if (real !== fs.realpathSync(dir) && !real.startsWith(fs.realpathSync(dir) + path.sep))
    throw new Error(`The build's output folder ${found} is a link leading out of the app folder.`);
  return { ...manifest, root: found };
}

/** The release needs installing (and building) before it can run: it brings no node_modules. */
export function needsBuild(dir: string, manifest: AppManifest): boolean {
  if (!manifest.commands?.install) return false;
  return !fs.existsSync(path.join(dir, 'node_modules')) || !!manifest.replaceModules;
}

/** The one line the deploy log opens a build with: what was detected and which commands run. */
export function describeDetection(m: AppManifest): string {
  const c = m.commands ?? {};
  const parts = [
    c.install &&
      (m.packageManager
        ? `install: pnpm install (${m.packageManager}, from the npm registry)`
        : `install: ${c.install.split(' --')[0]}`),
    c.build && `build: ${c.build}`,
    m.type === 'node'
      ? `start: ${m.start}`
      : `serve: static files from ${m.outputDirs?.join(' | ') ?? (m.root || '.')}${m.spa ? ' (SPA fallback)' : ''}`,
    m.keepDevDeps && 'dev dependencies kept (the start command needs them)',
  ].filter(Boolean);
  return `detected ${m.kind ?? m.type}: ${parts.join('; ')}`;
}
