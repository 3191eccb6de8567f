import { randomUUID } from 'node:crypto';
import { cdnAssets } from '../src/areas/cdn/tables.ts';
import { integrationConnections } from '../src/areas/integrations/tables.ts';
import { mailEmails } from '../src/areas/mail/tables.ts';
import { memories, memoryHistory } from '../src/areas/memory/tables.ts';
import { webdataExtractions } from '../src/areas/webdata/tables.ts';
import { workflowRuns } from '../src/areas/workflows/tables.ts';
import type { Deps } from '../src/deps.ts';

// Rows of usage on given days (mail, workflow runs, web data extractions, memories, assets, connections), written straight into the tables
// the usage-by-day functions read, so charts and counts can be checked without running the pipelines.

const at = (day: string) => new Date(`${day}T12:00:00Z`);

export async function seedMailOn(
  deps: Deps,
  orgId: string,
  day: string,
  status: 'delivered' | 'bounced' | 'sent',
  n = 1,
) {
  for (let i = 0; i < n; i++)
    await deps.db.orm.insert(mailEmails).values({
      orgId,
      environment: 'production',
      from: 'hello@acme.test',
      fromAddress: 'hello@acme.test',
      to: ['ada@example.com'],
      toAddresses: ['ada@example.com'],
      subject: 'Usage',
      status,
      createdAt: at(day),
      updatedAt: at(day),
    });
}

export async function seedRunOn(
  deps: Deps,
  orgId: string,
  day: string,
  credits: number,
  status: 'completed' | 'failed' = 'completed',
) {
  await deps.db.orm.insert(workflowRuns).values({
    orgId,
    environment: 'production',
    projectId: randomUUID(),
    workflowId: randomUUID(),
    status,
    steps: [],
    variables: {},
    creditsUsed: credits,
    createdAt: at(day),
  });
}

export async function seedExtractionOn(deps: Deps, orgId: string, day: string, n = 1) {
  for (let i = 0; i < n; i++)
    await deps.db.orm.insert(webdataExtractions).values({
      orgId,
      environment: 'production',
      url: 'https://example.com/',
      mode: 'markdown',
      status: 'completed',
      request: { mode: 'markdown' },
      createdAt: at(day),
    });
}

/** A memory stored on `day`, changed `changes` times on `changedOn` (memory_history rows). */
export async function seedMemoryOn(
  deps: Deps,
  orgId: string,
  day: string,
  changedOn?: string,
  changes = 0,
  environment: 'production' | 'sandbox' = 'production',
) {
  const [m] = await deps.db.orm
    .insert(memories)
    .values({
      orgId,
      environment,
      content: `usage ${randomUUID()}`,
      contentHash: randomUUID(),
      type: 'semantic',
      tier: 'warm',
      confidence: 1,
      createdAt: at(day),
      updatedAt: at(day),
    })
    .returning({ id: memories.id });
  for (let i = 0; i < changes; i++)
    await deps.db.orm.insert(memoryHistory).values({
      memoryId: m!.id,
      orgId,
      environment,
      content: 'before',
      type: 'semantic',
      tier: 'warm',
      confidence: 1,
      tags: [],
      metadata: {},
      event: 'updated',
      validFrom: at(day),
      validTo: at(changedOn ?? day),
    });
}

export async function seedAssetOn(
  deps: Deps,
  orgId: string,
  day: string,
  type: 'image' | 'video' | 'document',
  size: number,
  status: 'ready' | 'pending' = 'ready',
) {
  await deps.db.orm.insert(cdnAssets).values({
    orgId,
    environment: 'production',
    filename: `f-${randomUUID()}`,
    mimeType: 'application/octet-stream',
    declaredMimeType: 'application/octet-stream',
    type,
    size,
    status,
    blobKey: randomUUID(),
    createdAt: at(day),
    updatedAt: at(day),
  });
}

export async function seedConnectionOn(
  deps: Deps,
  orgId: string,
  day: string,
  status: 'connected' | 'error' = 'connected',
) {
  await deps.db.orm.insert(integrationConnections).values({
    orgId,
    environment: 'production',
    connectorSlug: 'hubspot',
    endUserId: randomUUID(),
    status,
    createdAt: at(day),
    updatedAt: at(day),
  });
}
