import { z } from 'zod';

// People as the function API shows them; the orgs area's member and admin functions answer them too.

export const emailInput = z.email().max(320);

export const userSchema = z.object({ id: z.string(), email: z.string() });
