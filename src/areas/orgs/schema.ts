import { z } from 'zod';

// Organizations and projects as the function API shows them.

/** A project or organization slug as a function takes it; other areas' functions name a project by it. */
export const slugInput = z.string().min(1).max(200);
export const roleSchema = z.enum(['owner', 'admin', 'member']);

export const organizationSchema = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  role: roleSchema,
});

export const projectListItemSchema = z.object({
  slug: z.string(),
  name: z.string(),
  orgSlug: z.string().nullable(),
});

export const projectSchema = z.object({
  id: z.string(),
  slug: z.string(),
  orgId: z.string(),
  region: z.string(),
  status: z.string(),
  errorMessage: z.string().optional(),
});
