import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type Served, siteHandler, startTrap, type Trap } from '../../../test/browser-site.ts';
import { ApiError } from '../errors.ts';
import { NO_OUTBOUND_ALLOW, parseOutboundAllow } from '../net/outbound-allow.ts';
import { navigate } from './navigate.ts';
import { BrowserPool } from './pool.ts';
import { createPageRenderer } from './renderer.ts';

// Real Chromium behind the guard. The site is on 127.0.0.2 (opened with OUTBOUND_ALLOW, as an operator
// would); everything it points at on 127.0.0.1, [::1] and the private/metadata ranges stays closed, and the
// trap server on 127.0.0.1/[::1] proves it by counting hits.

let trap: Trap;
let site: Served;
let pool: BrowserPool;

const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

beforeAll(async () => {
  trap = await startTrap();
  site = await listen(siteHandler(trap.port), '127.0.0.2');
  pool = new BrowserPool({
    executablePath,
    maxPages: 2,
    recycleAfter: 50,
    // Generous: the shared 2-core machine may be loaded many times over; the deadline is not what is tested.
    pageTimeoutMs: 60_000,
    outboundAllow: parseOutboundAllow('127.0.0.2/32').allow,
  });
});

afterAll(async () => {
  await pool?.close();
  await site?.close();
  await trap?.close();
});

async function failure(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('Chromium behind the SSRF guard', { timeout: 120_000 }, () => {
  it('a page cannot make the browser reach loopback, private, metadata, [::1] or IPv4-mapped addresses', async () => {
    const log = await pool.withPage({}, async (page, log) => {
      await navigate(page, log, `${site.url}/ssrf`);
      await page.waitForSelector('body[data-done]', { timeout: 10_000 });
      return log;
    });
    expect(trap.hits).toEqual([]);
    const blocked = log.blocked.map((b) => b.url);
    for (const path of [
      '/img-v4',
      '/img-v6',
      '/img-mapped',
      '/img-localhost',
      '/img-decimal',
      '/fetch',
      '/css',
    ]) {
      expect(blocked.some((u) => u.endsWith(path))).toBe(true);
    }
    expect(blocked).toContain('http://169.254.169.254/latest/meta-data/');
    expect(blocked.some((u) => u.startsWith('ws://127.0.0.1'))).toBe(true);
    expect(log.blocked.find((b) => b.url.endsWith('/img-v4'))?.error.message).toMatch(/loopback/);
    expect(log.blocked.find((b) => b.url.includes('169.254.169.254'))?.error.message).toMatch(/metadata/);
    expect(log.blocked.find((b) => b.url.includes('10.0.0.1'))?.error.message).toMatch(/private/);
    // Redirects of sub-resources and frames are re-checked hop by hop.
    expect(log.blocked.some((b) => b.url.endsWith('/redirect-to-trap'))).toBe(true);
    expect(log.blocked.some((b) => b.url.endsWith('/frame-redirect'))).toBe(true);
  });

  it('a redirect from the allowed host into private space fails the page, with the reason', async () => {
    const err = await failure(
      pool.withPage({}, (page, log) => navigate(page, log, `${site.url}/redirect-to-trap`)),
    );
    expect(err.code).toBe('URL_NOT_ALLOWED');
    expect(err.message).toMatch(/loopback/);
    expect(trap.hits).toEqual([]);
  });

  it('a redirect inside the allowed host lands on the final URL, and relative links resolve against it', async () => {
    const out = await pool.withPage({}, async (page, log) => {
      const nav = await navigate(page, log, `${site.url}/hop`);
      return { nav, text: await page.textContent('#final') };
    });
    expect(out.nav.finalUrl).toBe(`${site.url}/final`);
    expect(out.text).toBe('Final');
  });

  it('with OUTBOUND_ALLOW empty, a page on loopback is refused before anything connects', async () => {
    const closed = new BrowserPool({ ...pool.opts, outboundAllow: NO_OUTBOUND_ALLOW });
    try {
      for (const url of [
        `http://127.0.0.1:${trap.port}/`,
        `http://[::1]:${trap.port}/`,
        `http://[::ffff:127.0.0.1]:${trap.port}/`,
      ]) {
        const err = await failure(closed.withPage({}, (page, log) => navigate(page, log, url)));
        expect(err.code).toBe('URL_NOT_ALLOWED');
      }
      const scheme = await failure(
        closed.withPage({}, (page, log) => navigate(page, log, 'file:///etc/passwd')),
      );
      expect(scheme.code).toBe('URL_NOT_ALLOWED');
      expect(trap.hits).toEqual([]);
    } finally {
      await closed.close();
    }
  });

  it('the renderer gives the DOM after scripts ran, the final URL and the status', async () => {
    const r = createPageRenderer(pool);
    const out = await r.render(`${site.url}/js`, { waitForSelector: '#ready' });
    expect(out.html).toContain('Rendered by script');
    expect(out.status).toBe(200);
    expect(out.finalUrl).toBe(`${site.url}/js`);
    const missing = await r.render(`${site.url}/missing`);
    expect(missing.status).toBe(404);
    const err = await failure(r.render(`${site.url}/`, { waitForSelector: '#never' }));
    expect(err.message).toMatch(/did not appear/);
  });
});
