import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type Served, siteHandler, startTrap, type Trap } from '../../../test/browser-site.ts';
import { ApiError } from '../errors.ts';
import { parseOutboundAllow } from '../net/outbound-allow.ts';
import { navigate } from './navigate.ts';
import { BrowserPool } from './pool.ts';

// No Chromium left behind: many pages over several recycled browsers, a crashed tab, a browser killed from
// outside, then shutdown; every process of every browser's group is gone afterwards (checked by PID in /proc).
// The issue asks for 200 pages; the default here is 24 to spare the shared machine:
// PIER_BROWSER_LEAK_PAGES=200 runs the full count.

const PAGES = Number(process.env.PIER_BROWSER_LEAK_PAGES ?? 24);

let trap: Trap;
let site: Served;

beforeAll(async () => {
  trap = await startTrap();
  site = await listen(siteHandler(trap.port), '127.0.0.2');
});
afterAll(async () => {
  await site?.close();
  await trap?.close();
});

/** Live (non-zombie) processes whose process group is one of `groups`. */
function liveInGroups(groups: readonly number[]): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // Fields after the command name (which may hold spaces): state, ppid, pgrp, …
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state !== 'Z' && groups.includes(Number(pgrp))) found.push(Number(entry));
  }
  return found;
}

const alive = (pid: number) => {
  try {
    return !fs.readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
};

describe('the browser pool', () => {
  it(`serves ${PAGES} pages, survives a crashed tab and a killed browser, and leaves no process behind`, async () => {
    const pool = new BrowserPool({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      maxPages: 3,
      recycleAfter: 10,
      pageTimeoutMs: 90_000,
      outboundAllow: parseOutboundAllow('127.0.0.2/32').allow,
    });
    const seen = new Set<number>();
    const note = () => {
      for (const p of liveInGroups(pool.launchedPids())) seen.add(p);
    };
    let maxOpen = 0;
    let open = 0;
    const shot = () =>
      pool.withPage({ viewport: { width: 320, height: 240 } }, async (page, log) => {
        maxOpen = Math.max(maxOpen, ++open);
        try {
          await navigate(page, log, `${site.url}/`);
          note();
          return (await page.screenshot()).length;
        } finally {
          open--;
        }
      });

    const sizes = await Promise.all(Array.from({ length: PAGES }, shot));
    expect(sizes.every((s) => s > 100)).toBe(true);
    expect(maxOpen).toBeLessThanOrEqual(3);
    // Recycled every 10 pages.
    expect(pool.launchedPids().length).toBeGreaterThanOrEqual(Math.ceil(PAGES / 10));

    // A tab that crashes fails clearly and at once (its work was still waiting), and the next page gets a fresh browser.
    const before = pool.launchedPids().length;
    const crashStart = Date.now();
    const crash = await pool
      .withPage({}, async (page, log) => {
        await navigate(page, log, `${site.url}/`);
        note();
        const cdp = await page.context().newCDPSession(page);
        await cdp.send('Page.crash').catch(() => undefined);
        await page.waitForTimeout(10_000);
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(crash).toBeInstanceOf(ApiError);
    expect((crash as ApiError).code).toBe('PAGE_CRASHED');
    // Reported when the tab dies, not when the 90 s page deadline runs out.
    expect(Date.now() - crashStart).toBeLessThan(45_000);
    expect(await shot()).toBeGreaterThan(100);
    expect(pool.launchedPids().length).toBe(before + 1);

    // A browser killed from outside is replaced.
    const victim = pool.launchedPids().at(-1)!;
    process.kill(victim, 'SIGKILL');
    let ok = 0;
    for (let i = 0; i < 3 && ok === 0; i++) ok = await shot().catch(() => 0);
    expect(ok).toBeGreaterThan(100);
    expect(pool.launchedPids().at(-1)).not.toBe(victim);

    await pool.close();
    expect(seen.size).toBeGreaterThan(pool.launchedPids().length);
    expect([...seen].filter(alive)).toEqual([]);
    expect(liveInGroups(pool.launchedPids())).toEqual([]);
    const after = await pool.withPage({}, async () => 1).catch((e: ApiError) => e.code);
    expect(after).toBe('BROWSER_UNAVAILABLE');
  }, 600_000);
});
