import { z } from 'zod';
import { countsByDay, lastDays, usageDaysInput, utcDay } from '../../core/usage-days.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { orgForUser, slugInput } from '../orgs/index.ts';

// Mail over time for the dashboard's chart: e-mails accepted per UTC day (both environments), and how many
// of them are now sent, delivered, bounced or failed. A message counts on the day it was accepted.

const KEYS = ['accepted', 'sent', 'delivered', 'bounced', 'failed'] as const;

export const getMailUsageByDayForCli = defineFn({
  name: 'getMailUsageByDayForCli',
  summary:
    "The organization's e-mails per UTC day over the last `days` (default 30): accepted, and by outcome.",
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, days: usageDaysInput }),
  output: z.object({
    days: z.array(
      z.object({
        day: z.string(),
        accepted: z.number().int(),
        sent: z.number().int(),
        delivered: z.number().int(),
        bounced: z.number().int(),
        failed: z.number().int(),
      }),
    ),
  }),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const { org } = await orgForUser(deps, caller.userId, input.orgSlug);
    const days = await countsByDay(
      deps.db,
      `select ${utcDay('created_at')} as day, count(*) as accepted,
              count(*) filter (where status = 'sent') as sent,
              count(*) filter (where status = 'delivered') as delivered,
              count(*) filter (where status = 'bounced') as bounced,
              count(*) filter (where status = 'failed') as failed
         from mail_emails where org_id = $1 and created_at >= $2 group by 1`,
      org.id,
      lastDays(deps.clock.now(), input.days),
      KEYS,
    );
    return { days };
  },
});
