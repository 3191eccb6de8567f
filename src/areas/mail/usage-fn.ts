import { utcDay } from '../../core/usage-days.ts';
import { usageDaysFn } from '../orgs/index.ts';

// Mail over time for the dashboard's chart: e-mails accepted per UTC day (both environments), and how many
// of them are now sent, delivered, bounced or failed. A message counts on the day it was accepted.

export const getMailUsageByDayForCli = usageDaysFn({
  name: 'getMailUsageByDayForCli',
  summary:
    "The organization's e-mails per UTC day over the last `days` (default 30): accepted, and by outcome.",
  counters: ['accepted', 'sent', 'delivered', 'bounced', 'failed'],
  sql: `select ${utcDay('created_at')} as day, count(*) as accepted,
               count(*) filter (where status = 'sent') as sent,
               count(*) filter (where status = 'delivered') as delivered,
               count(*) filter (where status = 'bounced') as bounced,
               count(*) filter (where status = 'failed') as failed
          from mail_emails where org_id = $1 and created_at >= $2 group by 1`,
});
