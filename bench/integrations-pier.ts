// What both integrations benches start: the fake HubSpot holding `contacts` contacts, and Pier in this process
// on PGlite (as the test harness builds it) pointed at it, with rate limits out of the way.
import { systemClock } from '../src/core/clock.ts';
import { startHubspot } from '../test/fakes/integration-providers.ts';
import { testApp } from '../test/harness.ts';
import { providerEnv } from '../test/integrations-kit.ts';

export async function startIntegrationsBench(contacts: number) {
  const hubspot = await startHubspot();
  const stamp = new Date().toISOString();
  for (let i = 1; i <= contacts; i++)
    hubspot.store.contacts.push({
      id: String(i),
      properties: {
        firstname: `F${i}`,
        lastname: `L${i}`,
        email: `c${i}@acme.test`,
        phone: null,
        jobtitle: null,
      },
      createdAt: stamp,
      updatedAt: stamp,
      archived: false,
    });
  const stub = { url: hubspot.url };
  const env = {
    ...providerEnv({ hubspot: stub, slack: stub, drive: stub, notion: stub } as never),
    V1_RATE_LIMIT_PER_SEC: '100000',
    V1_RATE_LIMIT_BURST: '1000000',
  };
  const t = await testApp({ env, clock: systemClock, listen: true });
  return { hubspot, t };
}
