import fs from 'node:fs';
import path from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { CliContext } from '../context.ts';
import { CliError } from '../errors.ts';
import { toJson, wantsJson } from '../output.ts';

// pier web extract | crawl | screenshot <url> — start a web data extraction, crawl or screenshot for an
// organization and wait for it, with progress on stderr; the result (markdown, a page list, or the image saved
// with -o) on stdout, or the whole resource with --json.

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
  const web = program
    .command('web')
    .description('Extract web pages, take screenshots and crawl sites (web data)');

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

  registerScreenshot(web, ctx);
}

const FORMAT_OF_EXT: Record<string, 'png' | 'jpeg' | 'webp' | 'pdf'> = {
  '.png': 'png',
  '.jpg': 'jpeg',
  '.jpeg': 'jpeg',
  '.webp': 'webp',
  '.pdf': 'pdf',
};

type ShotOpts = {
  org: string;
  env: 'production' | 'sandbox';
  output?: string;
  format?: 'png' | 'jpeg' | 'webp' | 'pdf';
  quality?: number;
  fullPage?: boolean;
  dark?: boolean;
  device?: 'desktop' | 'tablet' | 'mobile';
  width?: number;
  height?: number;
  selector?: string;
  waitFor?: string;
  wait?: number;
  blockAds?: boolean;
  blockCookieBanners?: boolean;
};

function registerScreenshot(web: Command, ctx: CliContext): void {
  web
    .command('screenshot')
    .description('Take a screenshot of a page; save it with -o (the format follows the file name)')
    .argument('<url>', 'the page')
    .requiredOption('--org <slug>', 'organization slug')
    .addOption(envOption())
    .option('-o, --output <file>', 'save the image here (.png, .jpg, .webp or .pdf)')
    .addOption(new Option('--format <format>', 'image format').choices(['png', 'jpeg', 'webp', 'pdf']))
    .option('--quality <n>', 'jpeg/webp quality 0-100', int)
    .option('--full-page', 'the whole page, not just the viewport')
    .option('--dark', 'ask the page for its dark colour scheme')
    .addOption(new Option('--device <type>', 'device preset').choices(['desktop', 'tablet', 'mobile']))
    .option('--width <px>', 'viewport width', int)
    .option('--height <px>', 'viewport height', int)
    .option('--selector <css>', 'only this element')
    .option('--wait-for <css>', 'wait until this element is on the page')
    .option('--wait <ms>', 'wait this long after the page loaded', int)
    .option('--block-ads', 'do not load ads')
    .option('--block-cookie-banners', 'decline cookie banners')
    .action(async (url: string, opts: ShotOpts, cmd: Command) => {
      const fromName = opts.output ? FORMAT_OF_EXT[path.extname(opts.output).toLowerCase()] : undefined;
      if (opts.output && !opts.format && !fromName) {
        throw new CliError(
          'VALIDATION_ERROR',
          `Cannot tell the format from '${opts.output}': name it .png, .jpg, .webp or .pdf, or pass --format.`,
        );
      }
      const client = ctx.userClient();
      const scope = { orgSlug: opts.org, environment: opts.env };
      const body = {
        url,
        format: opts.format ?? fromName ?? 'png',
        fullPage: Boolean(opts.fullPage),
        darkMode: Boolean(opts.dark),
        blockAds: Boolean(opts.blockAds),
        blockCookieBanners: Boolean(opts.blockCookieBanners),
        deviceType: opts.device ?? 'desktop',
        ...(opts.quality !== undefined ? { quality: opts.quality } : {}),
        ...(opts.width !== undefined ? { viewportWidth: opts.width } : {}),
        ...(opts.height !== undefined ? { viewportHeight: opts.height } : {}),
        ...(opts.selector ? { selector: opts.selector } : {}),
        ...(opts.waitFor ? { waitForSelector: opts.waitFor } : {}),
        ...(opts.wait !== undefined ? { waitForTimeout: opts.wait } : {}),
      };
      const { id } = await client.call('startWebScreenshotForCli', { ...scope, ...body });
      ctx.io.stderr.write(`screenshot ${id} queued\n`);
      let shot = await client.call('getWebScreenshotForCli', { ...scope, id });
      let last = shot.status;
      while (!DONE.has(shot.status)) {
        await sleep(POLL_MS);
        shot = await client.call('getWebScreenshotForCli', { ...scope, id });
        if (shot.status !== last) ctx.io.stderr.write(`${shot.status}\n`);
        last = shot.status;
      }
      if (shot.status !== 'completed')
        throw new CliError('SCREENSHOT_FAILED', shot.error ?? 'The screenshot failed.');
      if (opts.output) {
        const full = await client.call('getWebScreenshotForCli', { ...scope, id, includeImage: true });
        if (!full.imageBase64) throw new CliError('SCREENSHOT_FAILED', 'The image is no longer stored.');
        fs.writeFileSync(opts.output, Buffer.from(full.imageBase64, 'base64'));
        ctx.io.stderr.write(`saved ${opts.output}\n`);
      }
      if (wantsJson(cmd)) return void ctx.io.stdout.write(toJson(shot));
      const size = `${shot.imageWidth}×${shot.imageHeight}, ${shot.imageSize} bytes`;
      ctx.io.stdout.write(`${opts.output ?? shot.imageUrl}  ${shot.format}  ${size}\n`);
    });
}
