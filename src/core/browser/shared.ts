import type { Config } from '../../config.ts';
import { BrowserPool } from './pool.ts';

// The process's one pool, made on first use from the config (nothing starts until a page is wanted) and
// closed by the web data area's stop.

let shared: BrowserPool | undefined;

export function sharedBrowserPool(config: Pick<Config, 'browser' | 'outboundAllow'>): BrowserPool {
  shared ??= new BrowserPool({ ...config.browser, outboundAllow: config.outboundAllow });
  return shared;
}

export async function closeSharedBrowserPool(): Promise<void> {
  const pool = shared;
  shared = undefined;
  await pool?.close();
}
