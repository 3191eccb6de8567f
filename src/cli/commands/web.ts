import { type Command, InvalidArgumentError, Option } from 'commander';
import type { CliContext } from '../context.ts';
import { CliError } from '../errors.ts';
import { toJson, wantsJson } from '../output.ts';

// pier web extract | crawl <url> — start a web data extraction or crawl for an organization and wait for it,
// with progress on stderr; the result (markdown, or a page list) on stdout, or the whole resource with --json.

const POLL_MS = 500;
const DONE = new Set(['completed', 'failed', 'cancelled']);

const envOption = () =>
  new Option('--env <environment>', 'production (live keys) or sandbox (test keys)')
    .choices(['production', 'sandbox'])
    .default('production');

function int(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n)) throw new InvalidArgumentError('Not a whole number.');
  return n;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function register(program: Command, ctx: CliContext): void {
  const web = program.command('web').description('Extract web pages and crawl sites (web data)');

  web
    .command('extract')
    .description('Extract a page as markdown (or schema data with --mode auto) and print it')
    .argument('<url>', 'the page')
    .requiredOption('--org <slug>', 'organization slug')
    .addOption(envOption())
    .addOption(
      new Option('--mode <mode>', 'what to extract').choices(['auto', 'markdown', 'raw']).default('markdown'),
    )
    .action(
      async (
        url: string,
        opts: { org: string; env: 'production' | 'sandbox'; mode: string },
        cmd: Command,
      ) => {
        const client = ctx.userClient();
        const scope = { orgSlug: opts.org, environment: opts.env };
        const { id } = await client.call('startWebExtractionForCli', {
          ...scope,
          url,
          mode: opts.mode as 'auto' | 'markdown' | 'raw',
        });
        ctx.io.stderr.write(`extraction ${id} queued\n`);
        let x = await client.call('getWebExtractionForCli', { ...scope, id });
        let last = x.status;
        while (!DONE.has(x.status)) {
          await sleep(POLL_MS);
          x = await client.call('getWebExtractionForCli', { ...scope, id });
          if (x.status !== last) ctx.io.stderr.write(`${x.status}\n`);
          last = x.status;
        }
        if (wantsJson(cmd)) return void ctx.io.stdout.write(toJson(x));
        if (x.status !== 'completed')
          throw new CliError('EXTRACTION_FAILED', x.error ?? 'The extraction failed.');
        const out = opts.mode === 'raw' ? String(x.extractedData?.html ?? '') : (x.markdown ?? '');
        ctx.io.stdout.write(out.endsWith('\n') ? out : `${out}\n`);
      },
    );

  web
    .command('crawl')
    .description('Crawl a site breadth-first and list the pages found')
    .argument('<url>', 'the start page')
    .requiredOption('--org <slug>', 'organization slug')
    .addOption(envOption())
    .option('--max-depth <n>', 'link hops from the start page (default 2)', int)
    .option('--max-pages <n>', 'pages at most (default 50)', int)
    .option('--ignore-robots', 'do not obey robots.txt')
    .action(
      async (
        url: string,
        opts: {
          org: string;
          env: 'production' | 'sandbox';
          maxDepth?: number;
          maxPages?: number;
          ignoreRobots?: boolean;
        },
        cmd: Command,
      ) => {
        const client = ctx.userClient();
        const scope = { orgSlug: opts.org, environment: opts.env };
        const { id } = await client.call('startWebCrawlForCli', {
          ...scope,
          url,
          ...(opts.maxDepth !== undefined ? { maxDepth: opts.maxDepth } : {}),
          ...(opts.maxPages !== undefined ? { maxPages: opts.maxPages } : {}),
          ...(opts.ignoreRobots ? { respectRobotsTxt: false } : {}),
        });
        ctx.io.stderr.write(`crawl ${id} queued\n`);
        let c = await client.call('getWebCrawlForCli', { ...scope, id });
        let shown = -1;
        while (!DONE.has(c.status)) {
          await sleep(POLL_MS);
          c = await client.call('getWebCrawlForCli', { ...scope, id });
          if (c.pagesCrawled !== shown)
            ctx.io.stderr.write(`${c.pagesCrawled} pages, ${c.pagesQueued} queued\n`);
          shown = c.pagesCrawled;
        }
        const full = await client.call('getWebCrawlForCli', { ...scope, id, includePages: true });
        if (wantsJson(cmd)) return void ctx.io.stdout.write(toJson(full));
        if (full.status === 'failed') throw new CliError('CRAWL_FAILED', full.error ?? 'The crawl failed.');
        const lines = (full.pages ?? []).map((p) => `${p.depth}  ${p.url}  ${p.title ?? ''}`.trimEnd());
        ctx.io.stdout.write(`${lines.join('\n')}\n${full.pagesCrawled} pages\n`);
      },
    );
}
