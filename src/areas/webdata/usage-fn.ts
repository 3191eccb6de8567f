import { z } from 'zod';
import { countsByDay, lastDays, usageDaysInput, utcDay } from '../../core/usage-days.ts';
import { defineFn } from '../../http/fn-kit.ts';
import { orgForUser, slugInput } from '../orgs/index.ts';

// Web data over time for the dashboard's chart: pages fetched per UTC day (both environments), as
// extractions (single pages, batch items, schedule runs) and as crawl pages.

export const getWebDataUsageByDayForCli = defineFn({
  name: 'getWebDataUsageByDayForCli',
  summary: "The organization's web pages fetched per UTC day over the last `days` (default 30).",
  auth: { kind: 'user' },
  input: z.strictObject({ orgSlug: slugInput, days: usageDaysInput }),
  output: z.object({
    days: z.array(z.object({ day: z.string(), extractions: z.number().int(), crawlPages: z.number().int() })),
  }),
  errors: ['ORG_NOT_FOUND'],
  handler: async ({ deps, caller }, input) => {
    const { org } = await orgForUser(deps, caller.userId, input.orgSlug);
    const days = await countsByDay(
      deps.db,
      `select day, sum(extractions) as extractions, sum(crawl_pages) as "crawlPages" from (
         select ${utcDay('created_at')} as day, count(*) as extractions, 0 as crawl_pages
           from webdata_extractions where org_id = $1 and created_at >= $2 group by 1
         union all
         select ${utcDay('p.created_at')} as day, 0, count(*)
           from webdata_crawl_pages p join webdata_crawls c on c.id = p.crawl_id
          where c.org_id = $1 and p.created_at >= $2
          group by 1
       ) u group by day`,
      org.id,
      lastDays(deps.clock.now(), input.days),
      ['extractions', 'crawlPages'] as const,
    );
    return { days };
  },
});
