import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../../../test/harness.ts';
import { seedMember, seedOrg, seedPlatform } from '../../../test/seed.ts';
import { auditEvents } from '../../core/audit/tables.ts';
import { recordModelUsage } from './model-usage.ts';
import { modelProviderKeys } from './tables.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp({
    env: {
      OPENAI_API_KEY: 'sk-platform-openai-key',
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      ANTHROPIC_API_KEY: 'sk-ant-platform-key',
    },
  });
});
afterAll(async () => {
  await t?.close();
});

describe('organization provider keys', () => {
  it('owners and admins set and remove keys; they are encrypted and never returned', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const admin = await seedMember(t.deps, org.id, 'admin');
    const member = await seedMember(t.deps, org.id, 'member');
    const secret = 'sk-org-openai-0123456789';
    const set = await t.call(
      'setModelProviderKeyForCli',
      { orgSlug: org.slug, provider: 'openai', apiKey: secret },
      owner.token,
    );
    expect(set.statusCode).toBe(200);
    expect(set.body).not.toContain(secret);
    const [row] = await t.deps.db.orm
      .select()
      .from(modelProviderKeys)
      .where(eq(modelProviderKeys.orgId, org.id));
    expect(row!.keyEnc).not.toContain(secret);
    expect(t.deps.keyring.decrypt(row!.keyEnc)).toBe(secret);

    const denied = await t.call(
      'setModelProviderKeyForCli',
      { orgSlug: org.slug, provider: 'openai', apiKey: secret },
      member.token,
    );
    expect(denied.statusCode).toBe(403);
    expect(denied.json().error.code).toBe('FORBIDDEN');
    const badProvider = await t.call(
      'setModelProviderKeyForCli',
      { orgSlug: org.slug, provider: 'pier', apiKey: secret },
      owner.token,
    );
    expect(badProvider.statusCode).toBe(400);

    const list = await t.call('listModelProvidersForCli', { orgSlug: org.slug }, member.token);
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain(secret);
    expect(list.body).not.toContain('sk-platform-openai-key');
    expect(list.json()).toEqual([
      { provider: 'openai', organizationKey: true, platformKey: true, updatedAt: expect.any(String) },
      { provider: 'anthropic', organizationKey: false, platformKey: true, updatedAt: null },
      { provider: 'google', organizationKey: false, platformKey: false, updatedAt: null },
      { provider: 'mistral', organizationKey: false, platformKey: false, updatedAt: null },
      { provider: 'pier', organizationKey: false, platformKey: false, updatedAt: null },
    ]);

    const removed = await t.call(
      'removeModelProviderKeyForCli',
      { orgSlug: org.slug, provider: 'openai' },
      admin.token,
    );
    expect(removed.json()).toEqual({ ok: true, provider: 'openai', removed: true });
    const again = await t.call(
      'removeModelProviderKeyForCli',
      { orgSlug: org.slug, provider: 'openai' },
      admin.token,
    );
    expect(again.json().removed).toBe(false);

    const actions = await t.deps.db.orm.select().from(auditEvents).where(eq(auditEvents.orgId, org.id));
    expect(actions.map((a) => a.action).sort()).toEqual(['model.key.remove', 'model.key.set']);
    expect(JSON.stringify(actions)).not.toContain(secret);
  });
});

describe('resolveModel', () => {
  it("prefers the organization's key, then the platform's; explicit provider/model wins over families", async () => {
    const { org, owner } = await seedOrg(t.deps);
    const proxy = await seedPlatform(t.deps, ['model.resolve']);
    const resolve = (model: string) => t.call('resolveModel', { orgId: org.id, model }, proxy.token);

    const platform = await resolve('gpt-4o-mini');
    expect(platform.statusCode).toBe(200);
    expect(platform.json()).toEqual({
      provider: 'openai',
      model: 'gpt-4o-mini',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: 'sk-platform-openai-key',
      keySource: 'platform',
    });

    await t.call(
      'setModelProviderKeyForCli',
      { orgSlug: org.slug, provider: 'openai', apiKey: 'sk-org-own-key-1' },
      owner.token,
    );
    expect((await resolve('gpt-4o-mini')).json()).toMatchObject({
      apiKey: 'sk-org-own-key-1',
      keySource: 'organization',
    });

    expect((await resolve('claude-3-5-haiku-latest')).json()).toMatchObject({
      provider: 'anthropic',
      baseUrl: 'https://api.anthropic.com/v1',
      keySource: 'platform',
    });
    // A bare name of a vendor family, and the same vendor named explicitly.
    expect((await resolve('openai/my-fine-tune')).json()).toMatchObject({
      provider: 'openai',
      model: 'my-fine-tune',
    });

    for (const model of ['gemini-2.5-flash', 'mistral/mistral-small-latest', 'llama3.2', 'pier/qwen3']) {
      const none = await resolve(model);
      expect(none.statusCode).toBe(404);
      expect(none.json().error.code).toBe('MODEL_NOT_AVAILABLE');
    }
    const bad = await resolve('not a model!');
    expect(bad.statusCode).toBe(400);
    const noOrg = await t.call(
      'resolveModel',
      { orgId: '00000000-0000-4000-8000-000000000000', model: 'gpt-4o' },
      proxy.token,
    );
    expect(noOrg.json().error.code).toBe('ORG_NOT_FOUND');

    const audits = await t.deps.db.orm.select().from(auditEvents).where(eq(auditEvents.orgId, org.id));
    const resolves = audits.filter((a) => a.action === 'model.resolve');
    expect(resolves.length).toBe(9); // every call, refusals included
    expect(resolves[0]).toMatchObject({ actorKind: 'platform', actorId: proxy.row.keyId });
    expect(resolves.map((a) => a.details.model)).toContain('gpt-4o-mini');
    expect(JSON.stringify(audits)).not.toMatch(/sk-org-own-key-1|sk-platform-openai-key|sk-ant-platform-key/);
  });

  it('is refused without the model.resolve scope, to personal tokens, and without a credential', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const other = await seedPlatform(t.deps, ['deploy', 'org.create']);
    const scoped = await t.call('resolveModel', { orgId: org.id, model: 'gpt-4o' }, other.token);
    expect(scoped.statusCode).toBe(403);
    expect(scoped.json().error.code).toBe('PLATFORM_SCOPE_DENIED');
    const personal = await t.call('resolveModel', { orgId: org.id, model: 'gpt-4o' }, owner.token);
    expect(personal.statusCode).toBe(403);
    expect(personal.json().error.code).toBe('FORBIDDEN');
    const anonymous = await t.call('resolveModel', { orgId: org.id, model: 'gpt-4o' });
    expect(anonymous.statusCode).toBe(401);
  });
});

describe('usage', () => {
  it('sums usage per day, environment and model for members', async () => {
    const { org, owner } = await seedOrg(t.deps);
    const usage = { promptTokens: 10, completionTokens: 5, totalTokens: 15 };
    await recordModelUsage(t.deps, {
      orgId: org.id,
      environment: 'production',
      model: 'openai/gpt-4o',
      usage,
    });
    await recordModelUsage(t.deps, {
      orgId: org.id,
      environment: 'production',
      model: 'openai/gpt-4o',
      usage,
    });
    await recordModelUsage(t.deps, { orgId: org.id, environment: 'sandbox', model: 'openai/gpt-4o', usage });
    const res = await t.call('getModelUsageForCli', { orgSlug: org.slug, days: 7 }, owner.token);
    expect(res.statusCode).toBe(200);
    const day = t.clock.now().toISOString().slice(0, 10);
    expect(res.json()).toEqual({
      days: 7,
      rows: [
        {
          day,
          environment: 'production',
          keyId: '',
          model: 'openai/gpt-4o',
          requests: 2,
          promptTokens: 20,
          completionTokens: 10,
          totalTokens: 30,
          costUsd: null,
        },
        {
          day,
          environment: 'sandbox',
          keyId: '',
          model: 'openai/gpt-4o',
          requests: 1,
          promptTokens: 10,
          completionTokens: 5,
          totalTokens: 15,
          costUsd: null,
        },
      ],
      totals: { requests: 3, promptTokens: 30, completionTokens: 15, totalTokens: 45, costUsd: null },
    });
  });
});
