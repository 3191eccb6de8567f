import fc from 'fast-check';
import { mintLoginCode } from '../src/areas/identity/login-codes.ts';
import { issuePersonalToken } from '../src/areas/identity/tokens.ts';
import type { FnDef } from '../src/http/fn-kit.ts';
import { functions } from '../src/http/fn-registry.ts';
import type { TestApp, TestAppOptions } from './harness.ts';
import type { Hints } from './openapi-arb.ts';
import type { Doc, Op } from './openapi-fuzz-kit.ts';
import { seedApiKey, seedOperator, seedOrg, seedPlatform, seedProject, seedSenderDomain } from './seed.ts';

// The tenant both documents are fuzzed against, and what each operation is sent: its credential, and the
// real names and ids its path parameters and properties are steered to so that many calls reach the handler.

export type Fixture = {
  docs: { fn: Doc; v1: Doc };
  credentialFor(o: Op): Promise<{ right?: string; wrong: string }>;
  hintsFor(o: Op): Hints;
  allowed5xx: ReadonlySet<string>;
};

/**
 * Rate limits lifted: a few hundred requests a second on one key would otherwise make most answers 429s
 * (documented, so right, but they reach no handler). Jobs are enqueued, never run.
 */
export const fuzzAppOptions: TestAppOptions = {
  queue: true,
  env: { V1_RATE_LIMIT_PER_SEC: '100000', V1_RATE_LIMIT_BURST: '100000' },
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
  const templateId = await created('/mail/templates', {
    name: 'Fuzz',
    subject: 'Hi {{name}}',
    text: 'Hello',
  });

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
  };
  const idByPath: [RegExp, string][] = [[/^\/v1\/mail\/templates\//, templateId]];

  let calls = 0;
  return {
    docs,
    allowed5xx: new Set(t.deps.db.features.has('vector') ? [] : ['VECTOR_EXTENSION_MISSING']),
    hintsFor(o) {
      const hints = { ...common };
      const id = idByPath.find(([re]) => re.test(o.path))?.[1];
      if (id) hints.id = fc.constant(id);
      if (o.path === '/api/fn/destroyProjectForCli') hints.projectSlug = fc.constant(doomed.slug);
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
