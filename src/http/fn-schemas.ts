import { z } from 'zod';

// Shapes shared by several functions (the contract's resources).
export const SLUG_RE = /^[a-z0-9](?:[a-z0-9-]{1,38})[a-z0-9]$/;
export const slugInput = z.string().min(1).max(200);
export const emailInput = z.email().max(320);
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

export const userSchema = z.object({ id: z.string(), email: z.string() });

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
