import { and, count, desc, eq } from 'drizzle-orm';
import type { z } from 'zod';
import { errors } from '../../core/errors.ts';
import { isUuid } from '../../core/ids.ts';
import { offsetPage } from '../../core/pagination.ts';
import type { Deps } from '../../deps.ts';
import type { ApiKeyCaller } from '../../http/v1-kit.ts';
import { mailErrors } from './errors.ts';
import type { templateBody, templatePatch, templateSchema } from './schema.ts';
import { mailTemplates } from './tables.ts';

// Stored templates with `{{variable}}` placeholders. Substituted values are HTML-escaped in the html part
// (plain in subject and text); a placeholder without a value is a 400 naming it.

type Template = typeof mailTemplates.$inferSelect;
type TemplateOut = z.infer<typeof templateSchema>;
export type Variables = Record<string, string | number | boolean | null>;

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;

export function escapeHtml(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

export function placeholders(...parts: (string | null | undefined)[]): string[] {
  const names = new Set<string>();
  for (const p of parts) for (const m of (p ?? '').matchAll(PLACEHOLDER)) names.add(m[1]!);
  return [...names];
}

function substitute(source: string, vars: Variables, asHtml: boolean): string {
  return source.replace(PLACEHOLDER, (_, name: string) => {
    if (!Object.hasOwn(vars, name)) throw mailErrors.templateVariableMissing(name);
    const v = vars[name];
    const s = v === null || v === undefined ? '' : String(v);
    return asHtml ? escapeHtml(s) : s;
  });
}

export function renderTemplate(
  t: { subject: string; html: string | null; text: string | null },
  vars: Variables,
): { subject: string; html: string | null; text: string | null } {
  // Check every placeholder first so the error names the first missing one in reading order.
  for (const name of placeholders(t.subject, t.html, t.text)) {
    if (!Object.hasOwn(vars, name)) throw mailErrors.templateVariableMissing(name);
  }
  return {
    subject: substitute(t.subject, vars, false),
    html: t.html === null ? null : substitute(t.html, vars, true),
    text: t.text === null ? null : substitute(t.text, vars, false),
  };
}

function toOut(t: Template): TemplateOut {
  return {
    id: t.id,
    name: t.name,
    subject: t.subject,
    html: t.html,
    text: t.text,
    variables: placeholders(t.subject, t.html, t.text),
    createdAt: t.createdAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
  };
}

const tenant = (c: ApiKeyCaller) =>
  and(eq(mailTemplates.orgId, c.orgId), eq(mailTemplates.environment, c.environment));

export async function findTemplate(deps: Deps, c: ApiKeyCaller, id: string): Promise<Template> {
  if (!isUuid(id)) throw mailErrors.templateNotFound();
  const [t] = await deps.db.orm
    .select()
    .from(mailTemplates)
    .where(and(tenant(c), eq(mailTemplates.id, id)));
  if (!t) throw mailErrors.templateNotFound();
  return t;
}

export async function createTemplate(deps: Deps, c: ApiKeyCaller, b: z.infer<typeof templateBody>) {
  const now = deps.clock.now();
  const [t] = await deps.db.orm
    .insert(mailTemplates)
    .values({
      orgId: c.orgId,
      environment: c.environment,
      name: b.name,
      subject: b.subject,
      html: b.html ?? null,
      text: b.text ?? null,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  return toOut(t!);
}

export async function getTemplate(deps: Deps, c: ApiKeyCaller, id: string) {
  return toOut(await findTemplate(deps, c, id));
}

export async function listTemplates(deps: Deps, c: ApiKeyCaller, q: { limit: number; offset: number }) {
  const [rows, [total]] = await Promise.all([
    deps.db.orm
      .select()
      .from(mailTemplates)
      .where(tenant(c))
      .orderBy(desc(mailTemplates.createdAt), desc(mailTemplates.id))
      .limit(q.limit)
      .offset(q.offset),
    deps.db.orm.select({ n: count() }).from(mailTemplates).where(tenant(c)),
  ]);
  return offsetPage(rows.map(toOut), total!.n, q);
}

export async function updateTemplate(
  deps: Deps,
  c: ApiKeyCaller,
  id: string,
  patch: z.infer<typeof templatePatch>,
) {
  const current = await findTemplate(deps, c, id);
  const next = {
    name: patch.name ?? current.name,
    subject: patch.subject ?? current.subject,
    html: patch.html === undefined ? current.html : patch.html,
    text: patch.text === undefined ? current.text : patch.text,
  };
  if (next.html === null && next.text === null) throw errors.validation('A template needs html or text.');
  const [t] = await deps.db.orm
    .update(mailTemplates)
    .set({ ...next, updatedAt: deps.clock.now() })
    .where(and(tenant(c), eq(mailTemplates.id, id)))
    .returning();
  return toOut(t!);
}

export async function deleteTemplate(deps: Deps, c: ApiKeyCaller, id: string) {
  await findTemplate(deps, c, id);
  await deps.db.orm.delete(mailTemplates).where(and(tenant(c), eq(mailTemplates.id, id)));
  return { success: true as const };
}
