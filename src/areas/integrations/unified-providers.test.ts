import { afterAll, beforeAll, describe, it } from 'vitest';
import { attioCase } from '../../../test/fakes/unified/attio.ts';
import { boxCase } from '../../../test/fakes/unified/box.ts';
import { capsuleCase } from '../../../test/fakes/unified/capsule.ts';
import { closeCase } from '../../../test/fakes/unified/close.ts';
import { codaCase } from '../../../test/fakes/unified/coda.ts';
import { freshsalesCase } from '../../../test/fakes/unified/freshsales.ts';
import type { KitFake } from '../../../test/fakes/unified/kit.ts';
import { teamsCase } from '../../../test/fakes/unified/microsoft-teams.ts';
import { onedriveCase } from '../../../test/fakes/unified/onedrive.ts';
import { smartsheetCase } from '../../../test/fakes/unified/smartsheet.ts';
import { webexCase } from '../../../test/fakes/unified/webex.ts';
import { zendeskSellCase } from '../../../test/fakes/unified/zendesk-sell.ts';
import { zohoCrmCase } from '../../../test/fakes/unified/zoho-crm.ts';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { runCase, type UnifiedCase } from '../../../test/unified-scenarios.ts';

// Unified connectors beyond the first eight, each against a local fake written from the provider's public
// API reference (test/fakes/unified/<slug>.ts), through the same scenario of its category
// (test/unified-scenarios.ts): create, page through, read, update, delete, with the provider's own paths,
// field names and paging.

const cases: UnifiedCase[] = [
  zohoCrmCase,
  closeCase,
  attioCase,
  onedriveCase,
  boxCase,
  teamsCase,
  smartsheetCase,
  codaCase,
  zendeskSellCase,
  freshsalesCase,
  capsuleCase,
  webexCase,
];

let t: TestApp;
const fakes = new Map<string, KitFake<unknown>>();

beforeAll(async () => {
  for (const c of cases) fakes.set(c.slug, await c.start());
  const env: Record<string, string> = { OUTBOUND_ALLOW: '127.0.0.1/32' };
  for (const c of cases) Object.assign(env, c.env(fakes.get(c.slug)!.url));
  t = await testApp({ env });
});
afterAll(async () => {
  await t?.close();
  for (const f of fakes.values()) await f.close();
});

describe('unified connectors against their fakes', () => {
  for (const c of cases)
    it(`${c.slug} (${c.category})`, async () => {
      await runCase(t, c, fakes.get(c.slug)!);
    });
});
