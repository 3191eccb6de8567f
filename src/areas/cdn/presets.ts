import { and, asc, count, eq } from 'drizzle-orm';
import type { Deps } from '../../deps.ts';
import type { CdnScope } from './assets.ts';
import { cdnErrors } from './errors.ts';
import { type TransformOptions, transformOptions } from './schema.ts';
import { cdnPresets } from './tables.ts';

// Named transform presets (Cloudinary's named transformations, Bunny's classes): an organization's
// environment saves options under a name, and a URL says `?p=<name>` instead of the options. A URL naming only
// a preset needs no signature — the organization's presets are its allow-list (decision 120) — so an app
// builds `…/cdn/t/<assetId>?p=thumb` itself. Editing a preset changes what its URLs render from then on: the
// cache keys a rendition by the resolved options, not the name.

const MAX_PRESETS = 100;

const scoped = (s: CdnScope, name?: string) =>
  and(
    eq(cdnPresets.orgId, s.orgId),
    eq(cdnPresets.environment, s.environment),
    ...(name ? [eq(cdnPresets.name, name)] : []),
  );

type PresetRow = typeof cdnPresets.$inferSelect;
const out = (r: PresetRow) => ({
  name: r.name,
  options: transformOptions.parse(r.options),
  createdAt: r.createdAt.toISOString(),
  updatedAt: r.updatedAt.toISOString(),
});

/** Creates or replaces a preset. */
export async function putPreset(deps: Deps, s: CdnScope, name: string, options: TransformOptions) {
  const now = deps.clock.now();
  // A soft limit: two concurrent creations may pass it by one, which costs nothing.
  const [existing] = await deps.db.orm
    .select({ name: cdnPresets.name })
    .from(cdnPresets)
    .where(scoped(s, name));
  if (!existing) {
    const [n] = await deps.db.orm.select({ n: count() }).from(cdnPresets).where(scoped(s));
    if ((n?.n ?? 0) >= MAX_PRESETS) throw cdnErrors.presetLimit();
  }
  const [row] = await deps.db.orm
    .insert(cdnPresets)
    .values({ ...s, name, options, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({
      target: [cdnPresets.orgId, cdnPresets.environment, cdnPresets.name],
      set: { options, updatedAt: now },
    })
    .returning();
  return out(row!);
}

export async function listPresets(deps: Deps, s: CdnScope) {
  const rows = await deps.db.orm.select().from(cdnPresets).where(scoped(s)).orderBy(asc(cdnPresets.name));
  return { items: rows.map(out) };
}

export async function deletePreset(deps: Deps, s: CdnScope, name: string) {
  const gone = await deps.db.orm.delete(cdnPresets).where(scoped(s, name)).returning({ n: cdnPresets.name });
  if (gone.length === 0) throw cdnErrors.presetNotFound(name);
  return { success: true as const };
}

/** A preset's options, looked up in the tenant that owns the asset (another tenant's preset is not found). */
export async function presetOptionsForAsset(deps: Deps, assetId: string, name: string) {
  const { rows } = await deps.db.query<{ options: Record<string, unknown> }>(
    `SELECT p.options FROM cdn_presets p JOIN cdn_assets a
       ON a.org_id = p.org_id AND a.environment = p.environment
     WHERE a.id = $1 AND p.name = $2`,
    [assetId, name],
  );
  if (!rows[0]) throw cdnErrors.presetNotFound(name);
  return transformOptions.parse(rows[0].options);
}

/** The caller's preset, for minting a URL (PRESET_NOT_FOUND when it does not exist). */
export async function presetOptions(deps: Deps, s: CdnScope, name: string) {
  const [row] = await deps.db.orm.select().from(cdnPresets).where(scoped(s, name));
  if (!row) throw cdnErrors.presetNotFound(name);
  return transformOptions.parse(row.options);
}
