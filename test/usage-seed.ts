import { randomUUID } from 'node:crypto';
import { mailEmails } from '../src/areas/mail/tables.ts';
import { webdataExtractions } from '../src/areas/webdata/tables.ts';
import { workflowRuns } from '../src/areas/workflows/tables.ts';
import type { Deps } from '../src/deps.ts';

// Rows of usage on given days (mail, workflow runs, web data extractions), written straight into the tables
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
