import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type TestApp, testApp, uniq } from '../../../test/harness.ts';
import { seedProject, seedUser } from '../../../test/seed.ts';
import { createOrg } from './orgs.ts';

// Issue 14: a repeated function call must be answered from the credential and access caches, reading no
// credential, project, org or membership row, on PostgreSQL as on PGlite, from the first calls after start.
// Statements are recorded at the driver (every pg.Client, or the PGlite instance) so nothing is missed;
// only the rows the request path would read are counted, since the job queue runs its own statements.

const REQUEST_PATH_TABLES = /"(credentials|projects|orgs|memberships)"/;

let t: TestApp;
const sent: string[] = [];
beforeAll(async () => {
  t = await testApp({ background: true });
  const pglite = t.deps.db.pglite;
  if (pglite) {
    const query = pglite.query.bind(pglite);
    const exec = pglite.exec.bind(pglite);
    pglite.query = ((text: string, ...rest: unknown[]) => {
      sent.push(text);
      return (query as (...a: unknown[]) => unknown)(text, ...rest);
    }) as typeof pglite.query;
    pglite.exec = ((text: string, ...rest: unknown[]) => {
      sent.push(text);
      return (exec as (...a: unknown[]) => unknown)(text, ...rest);
    }) as typeof pglite.exec;
  } else {
    const query = pg.Client.prototype.query;
    vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...a: unknown[]) {
      const q = a[0] as string | { text?: string };
      sent.push(typeof q === 'string' ? q : (q.text ?? ''));
      return (query as (...x: unknown[]) => unknown).apply(this, a) as never;
    });
  }
});
afterAll(async () => {
  vi.restoreAllMocks();
  await t?.close();
});

function requestPathStatements(): string[] {
  return sent.filter((s) => REQUEST_PATH_TABLES.test(s));
}

describe('a repeated getProjectForCli call with a personal token', () => {
  it('reads no credential or project row after the first call, and sees a revocation at once', async () => {
    const { user, token } = await seedUser(t.deps);
    const org = await createOrg(t.deps, { slug: uniq('org'), name: 'O', ownerUserId: user.id });
    const project = await seedProject(t.deps, org);
    const first = await t.call('getProjectForCli', { slug: project.slug }, token);
    expect(first.statusCode).toBe(200);

    sent.length = 0;
    for (let i = 0; i < 20; i++) {
      const r = await t.call('getProjectForCli', { slug: project.slug }, token);
      expect(r.statusCode).toBe(200);
    }
    expect(requestPathStatements()).toEqual([]);

    // The cache does not hide a revocation.
    const {
      rows: [row],
    } = await t.deps.db.query<{ id: string }>(
      "SELECT id FROM credentials WHERE user_id = $1 AND kind = 'pk'",
      [user.id],
    );
    await t.deps.credentials.revoke(row!.id);
    expect((await t.call('getProjectForCli', { slug: project.slug }, token)).statusCode).toBe(401);
  });
});
