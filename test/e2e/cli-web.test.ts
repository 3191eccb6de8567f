import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestApp, testApp } from '../harness.ts';
import { seedMember, seedV1Tenant } from '../seed.ts';
import { type Site, startSite } from '../webdata-site.ts';
import { json, pier, removeScratchHomes, scratchHome } from './cli-helpers.ts';

// `pier web extract | crawl` against a real server with its job worker, as a plain member with a personal
// token, on the local test site.

let t: TestApp;
let url: string;
let site: Site;
beforeAll(async () => {
  site = await startSite({ articles: 3 });
  t = await testApp({ background: true, env: { OUTBOUND_ALLOW: '127.0.0.1/32' } });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  removeScratchHomes();
  await t?.close();
  await site?.close();
});

it('extracts a page as markdown and crawls a site with progress', { timeout: 120_000 }, async () => {
  const tenant = await seedV1Tenant(t.deps);
  const member = await seedMember(t.deps, tenant.org.id, 'member');
  const home = scratchHome();
  const run = (args: string[]) => pier(args, { url, home, env: { PIER_TOKEN: member.token } });
  const org = tenant.org.slug;

  const md = await run(['web', 'extract', `${site.url}/articles/2`, '--org', org]);
  expect(md.code, md.stderr).toBe(0);
  expect(md.stdout).toContain('Article 2 heading');
  expect(md.stderr).toMatch(/extraction .* queued/);

  const failed = await run(['web', 'extract', `${site.url}/missing`, '--org', org]);
  expect(failed.code).toBe(1);
  expect(failed.stderr).toContain('error EXTRACTION_FAILED: HTTP status: the page answered 404.');

  const crawl = await run([
    'web',
    'crawl',
    `${site.url}/`,
    '--org',
    org,
    '--max-depth',
    '1',
    '--max-pages',
    '3',
  ]);
  expect(crawl.code, crawl.stderr).toBe(0);
  expect(crawl.stdout).toContain(`0  ${site.url}/  Home`);
  expect(crawl.stdout).toMatch(/3 pages\n$/);

  const asJson = json<{ status: string; pages: unknown[] }>(
    await run(['web', 'crawl', `${site.url}/`, '--org', org, '--max-depth', '0', '--json']),
  );
  expect(asJson.status).toBe('completed');
  expect(asJson.pages).toHaveLength(1);

  const stranger = await run(['web', 'extract', site.url, '--org', 'no-such-org']);
  expect(stranger.stderr).toContain('ORG_NOT_FOUND');
});
