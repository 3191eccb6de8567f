import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestApp, testApp } from '../harness.ts';
import { seedMember, seedProject, seedV1Tenant } from '../seed.ts';
import { pier, removeScratchHomes, scratchHome } from './cli-helpers.ts';

// `pier workflows run <slug> --var k=v` against a real server with the worker role, as a plain member:
// the run is started, followed step by step, and its output printed; a failed run exits 1.

let t: TestApp;
let url: string;
beforeAll(async () => {
  t = await testApp({ background: true });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  removeScratchHomes();
  await t?.close();
});

it('runs a workflow with variables and follows it to the end', { timeout: 120_000 }, async () => {
  const a = await seedV1Tenant(t.deps);
  const project = await seedProject(t.deps, a.org);
  const member = await seedMember(t.deps, a.org.id, 'member');
  const create = (slug: string, steps: unknown[]) =>
    t.v1('POST', '/workflows', a.live, {
      projectSlug: project.slug,
      slug,
      name: slug,
      steps,
      variables: { n: { type: 'number', required: true }, who: { type: 'string' } },
    });
  expect(
    (
      await create('double', [
        { id: 'twice', type: 'transform', expression: 'variables.n * 2' },
        { id: 'greet', type: 'transform', expression: '"hi " & variables.who', dependsOn: ['twice'] },
      ])
    ).statusCode,
  ).toBe(201);
  await create('broken', [{ id: 'boom', type: 'code', code: 'throw new Error("nope")' }]);
  const home = scratchHome();
  const run = (args: string[]) => pier(args, { url, home, env: { PIER_TOKEN: member.token } });
  const base = ['workflows', 'run', '--org', a.org.slug, '--project', project.slug];

  const ok = await run([
    ...base.slice(0, 2),
    'double',
    ...base.slice(2),
    '--var',
    'n=21',
    '--var',
    'who=Ada',
  ]);
  expect(ok.code, ok.stderr).toBe(0);
  expect(ok.stdout).toContain('twice: completed');
  expect(ok.stdout).toContain('greet: completed');
  expect(ok.stdout).toMatch(/run completed/);
  expect(ok.stdout).toContain('"twice": 42');
  expect(ok.stdout).toContain('"greet": "hi Ada"');

  const missing = await run([...base.slice(0, 2), 'double', ...base.slice(2)]);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain("'n' is required");

  const failed = await run([...base.slice(0, 2), 'broken', ...base.slice(2), '--var', 'n=1']);
  expect(failed.code).toBe(1);
  expect(failed.stderr).toContain('Error: nope');
});
