// Apps locked with pnpm (a `pnpm-lock.yaml`, no package-lock.json) are installed with pnpm itself, fetched from the
// npm registry by npm (`npm exec`, checked against the registry's integrity like any package) into the
// project's npm cache: nothing comes from anywhere but the npm registry, which pnpm also installs from. The version
// is the one `packageManager` in package.json names (what corepack would run), else PNPM_VERSION.
// Yarn stays refused (docs/hosting.md, "Other package managers").

/** pnpm's version when package.json names none; reads lockfileVersion 9.0 (pnpm 9 and later). */
export const PNPM_VERSION = '12.26.0';

/** `pnpm@9.15.0` or `pnpm@9.15.0+sha512.…` → `9.15.0`; anything else (another tool, a range) → null. */
export function pnpmVersionOf(packageManager: unknown): string | null {
  if (typeof packageManager !== 'string') return null;
  const m = /^pnpm@(\d{1,4}\.\d{1,4}\.\d{1,4})(?:\+[\w.]+)?$/.exec(packageManager.trim());
  return m ? m[1]! : null;
}

/** The pnpm major versions that read today's lockfile format (9.0). */
export function pnpmReadsLockfile(version: string): boolean {
  return Number(version.split('.')[0]) >= 9;
}

export function pnpmCommands(version: string): { install: string; prune: string } {
  const pnpm = `npm exec --yes pnpm@${version} --`;
  return {
    // NODE_ENV=production (the build's) would leave devDependencies out: the build needs them.
    install: `${pnpm} install --frozen-lockfile --prod=false --store-dir "$npm_config_cache/pnpm-store" --reporter=append-only`,
    prune: `${pnpm} prune --prod`,
  };
}
