import { utcDay } from '../../core/usage-days.ts';
import { usageDaysFn } from '../orgs/index.ts';

// Web data over time for the dashboard's chart: pages fetched per UTC day (both environments), as
// extractions (single pages, batch items, schedule runs) and as crawl pages.

export const getWebDataUsageByDayForCli = usageDaysFn({
  name: 'getWebDataUsageByDayForCli',
  summary: "The organization's web pages fetched per UTC day over the last `days` (default 30).",
  counters: ['extractions', 'crawlPages'],
  sql: `select day, sum(extractions) as extractions, sum(crawl_pages) as "crawlPages" from (
          select ${utcDay('created_at')} as day, count(*) as extractions, 0 as crawl_pages
            from webdata_extractions where org_id = $1 and created_at >= $2 group by 1
          union all
          select ${utcDay('p.created_at')} as day, 0, count(*)
            from webdata_crawl_pages p join webdata_crawls c on c.id = p.crawl_id
           where c.org_id = $1 and p.created_at >= $2
           group by 1
        ) u group by day`,
});
