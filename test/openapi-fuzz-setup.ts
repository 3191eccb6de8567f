import fc from 'fast-check';
import { mintLoginCode } from '../src/areas/identity/login-codes.ts';
import { issuePersonalToken } from '../src/areas/identity/tokens.ts';
import type { FnDef } from '../src/http/fn-kit.ts';
import { functions } from '../src/http/fn-registry.ts';
import type { TestApp, TestAppOptions } from './harness.ts';
import type { Hints } from './openapi-arb.ts';
import type { Doc, Op } from './openapi-fuzz-kit.ts';
import { seedApiKey, seedOperator, seedOrg, seedPlatform, seedProject, seedSenderDomain } from './seed.ts';
import { startSite } from './webdata-site.ts';

// The tenant both documents are fuzzed against, and what each operation is sent: its credential, and the
// real names and ids its path parameters and properties are steered to so that many calls reach the handler.

export type Fixture = {
  docs: { fn: Doc; v1: Doc };
  credentialFor(o: Op): Promise<{ right?: string; wrong: string }>;
  hintsFor(o: Op): Hints;
  allowed5xx: ReadonlySet<string>;
  close(): Promise<void>;
};

/**
 * Rate limits lifted: a few hundred requests a second on one key would otherwise make most answers 429s
 * (documented, so right, but they reach no handler). Jobs are enqueued, never run, so no fetch or
 * provider call happens behind an answer.
 */
export const fuzzAppOptions: TestAppOptions = {
  queue: true,
  // Web data may fetch the local test site (test/webdata-site.ts), and only it.
  env: { V1_RATE_LIMIT_PER_SEC: '100000', V1_RATE_LIMIT_BURST: '100000', OUTBOUND_ALLOW: '127.0.0.1/32' },
  limits: { loginCodeFailures: { limit: 1_000_000, windowSec: 60 } },
};

const defs = new Map((functions as readonly FnDef[]).map((d) => [d.name, d]));

export async function fuzzFixture(t: TestApp): Promise<Fixture> {
  const { org, owner } = await seedOrg(t.deps);
  const project = await seedProject(t.deps, org);
  // destroyProjectForCli with a valid body destroys what it names: give it a project of its own.
  const doomed = await seedProject(t.deps, org);
  const live = (await seedApiKey(t.deps, org.id, 'live')).key;
  const test = (await seedApiKey(t.deps, org.id, 'test')).key;
  await seedSenderDomain(t.deps, org.id, 'acme.test');
  const fnCreds: Record<string, string> = {
    user: owner.token,
    platform: (await seedPlatform(t.deps, ['org.create', 'project.create', 'deploy', 'model.resolve'])).token,
    operator: (await seedOperator(t.deps)).token,
  };
  const code = (await mintLoginCode(t.deps, { userId: owner.user.id, label: 'fuzz' })).code;

  const created = async (url: string, body: unknown) => {
    const res = await t.v1('POST', url, live, body);
    if (res.statusCode >= 300) throw new Error(`seeding ${url}: ${res.statusCode} ${res.body}`);
    return res.json().id as string;
  };
  const agentId = await created('/memory/agents', { name: 'Fuzz agent' });
  const collectionId = await created('/memory/collections', { name: 'Fuzz collection' });
  // What the DELETE operations may delete, so the operations after them still find the ones above.
  const doomedAgentId = await created('/memory/agents', { name: 'Doomed agent' });
  const doomedCollectionId = await created('/memory/collections', { name: 'Doomed collection' });
  const connectors = (await t.v1('GET', '/integrations/connectors', live)).json().data as { slug: string }[];
  const site = await startSite({ articles: 3 });
  const templateId = await created('/mail/templates', {
    name: 'Fuzz',
    subject: 'Hi {{name}}',
    text: 'Hello',
  });

  // Real ids for the path parameters of the things below; a thing that cannot be made here (no browser for
  // a screenshot, say) leaves its operations to generated ids, which are 404s.
  const maybe = (url: string, body: unknown) => created(url, body).catch(() => undefined);
  const things: [RegExp, string | undefined][] = [
    [
      /^\/v1\/mail\/emails\//,
      await maybe('/mail/send', { from: 'a@acme.test', to: 'b@example.com', subject: 'S', text: 'T' }),
    ],
    [/^\/v1\/memory\/memories\//, await maybe('/memory/memories', { content: 'The fuzzer was here' })],
    [/^\/v1\/webdata\/extractions\//, await maybe('/webdata/extractions', { url: `${site.url}/` })],
    [
      /^\/v1\/webdata\/schedules\//,
      await maybe('/webdata/schedules', {
        name: 'S',
        url: `${site.url}/`,
        type: 'extraction',
        frequency: 'daily',
      }),
    ],
    [/^\/v1\/webdata\/crawl\//, await maybe('/webdata/crawl', { url: `${site.url}/` })],
    [/^\/v1\/webdata\/batch\//, await maybe('/webdata/batch/extractions', { urls: [`${site.url}/`] })],
  ];

  const get = async (url: string) => (await t.app.inject({ method: 'GET', url })).json() as Doc;
  const docs = { fn: await get('/api/fn/openapi.json'), v1: await get('/v1/openapi.json') };

  const common: Hints = {
    orgSlug: fc.constant(org.slug),
    orgId: fc.constant(org.id),
    projectSlug: fc.constant(project.slug),
    email: fc.constant(owner.user.email),
    code: fc.constant(code),
    agentId: fc.constant(agentId),
    collectionId: fc.constant(collectionId),
    from: fc.constant('Fuzz <fuzz@acme.test>'),
    environment: fc.constantFrom('sandbox', 'production'),
    url: fc.constantFrom(`${site.url}/`, `${site.url}/docs`),
    urls: fc.constant([`${site.url}/`]),
    to: fc.constantFrom('someone@example.com', ['a@example.com', 'B <b@example.com>']),
    domain: fc.constant('acme.test'),
    key: fc.constantFrom('API_TOKEN', 'DATABASE_URL'),
    slug: fc.constant(project.slug),
    projectId: fc.constant(project.id),
    connectorSlug: fc.constantFrom(...connectors.map((c) => c.slug).slice(0, 3)),
  };
  const idByPath: [RegExp, string][] = [[/^\/v1\/mail\/templates\//, templateId]];

  let calls = 0;
  return {
    docs,
    close: () => site.close(),
    allowed5xx: new Set(t.deps.db.features.has('vector') ? [] : ['VECTOR_EXTENSION_MISSING']),
    hintsFor(o) {
      const hints = { ...common };
      const id = idByPath.find(([re]) => re.test(o.path))?.[1];
      if (id) hints.id = fc.constant(id);
      // Not for DELETE: the operations after it in the document would meet a 404.
      const thing = o.method === 'DELETE' ? undefined : things.find(([re]) => re.test(o.path))?.[1];
      if (thing) for (const p of ['id', 'memoryId', 'crawlId']) hints[p] = fc.constant(thing);
      if (o.path === '/api/fn/destroyProjectForCli') hints.slug = fc.constant(doomed.slug);
      if (o.method === 'DELETE') {
        hints.agentId = fc.constant(doomedAgentId);
        hints.collectionId = fc.constant(doomedCollectionId);
      }
      return hints;
    },
    async credentialFor(o) {
      if (o.doc === docs.v1) return { right: calls++ % 5 === 4 ? test : live, wrong: 'sk_live.nope' };
      const name = o.path.replace('/api/fn/', '');
      const kind = defs.get(name)?.auth.kind;
      // Logging out would end the fuzzing of the owner's token: revokeTokenForCli gets a throw-away one.
      if (name === 'revokeTokenForCli')
        return { right: (await issuePersonalToken(t.deps, owner.user.id, 'x')).token, wrong: live };
      return { right: kind && kind !== 'none' ? fnCreds[kind] : undefined, wrong: live };
    },
  };
}
