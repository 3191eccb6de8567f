import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/areas/hosting/runtime/local-driver.ts';
import { systemClock } from '../../src/core/clock.ts';
import { dropAppDatabases, type TestApp, testApp } from '../harness.ts';
import { viaRouter } from '../hosting.ts';
import { seedOrg, seedProject } from '../seed.ts';

// Deploying from an MCP client: two files inline, through the normal pipeline, then served at the URL the
// tool answers.

let t: TestApp;
let client: Client;
const logo = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

beforeAll(async () => {
  const port = await freePort();
  t = await testApp({
    listen: port,
    clock: systemClock,
    hosting: true,
    env: { PUBLIC_URL: `http://127.0.0.1:${port}`, APPS_DOMAIN: 'apps.test', APP_HEALTH_TIMEOUT_MS: '8000' },
  });
});
afterAll(async () => {
  await client?.close().catch(() => {});
  // Before close: the test database (and its pool) goes with the app.
  if (t) await dropAppDatabases(t.deps);
  await t?.close();
});

async function connect(token: string): Promise<Client> {
  const c = new Client({ name: 'pier-test', version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return c;
}

describe('deployApp', () => {
  it('deploys a two-file static site that then answers at its URL', async () => {
    const { owner, org } = await seedOrg(t.deps);
    const p = await seedProject(t.deps, org);
    client = await connect(owner.token);
    const r = await client.callTool({
      name: 'deployApp',
      arguments: {
        projectSlug: p.slug,
        files: {
          'index.html':
            '<!doctype html><link rel="stylesheet" href="/site.css"><h1>Deployed by an agent</h1>',
          'site.css': 'h1 { color: teal; }',
          // A binary file travels as base64: every byte value, NUL and invalid UTF-8 included.
          'img/logo.bin': { base64: logo.toString('base64') },
        },
      },
    });
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    const out = r.structuredContent as { status: string; url: string; deploymentId: string };
    expect(out.status).toBe('live');
    expect(out.url).toBe(`http://${p.slug}.apps.test`);
    const home = await viaRouter(t, p.slug, '/');
    expect(home.status).toBe(200);
    expect(home.body).toContain('Deployed by an agent');
    const css = await viaRouter(t, p.slug, '/site.css');
    expect(css.body).toContain('teal');
    const bin = await viaRouter(t, p.slug, '/img/logo.bin');
    expect(bin.status).toBe(200);
    expect(bin.raw.equals(logo)).toBe(true);
  });

  it('refuses files past the caps and unsafe paths with a clear tool error; a bad app is refused, a crashing one fails with its reason', async () => {
    const { owner, org } = await seedOrg(t.deps);
    const p = await seedProject(t.deps, org);
    const c = await connect(owner.token);
    const many = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`f${i}.txt`, 'x']));
    const tooMany = await c.callTool({ name: 'deployApp', arguments: { projectSlug: p.slug, files: many } });
    expect(tooMany.isError).toBe(true);
    expect((tooMany.content as { text: string }[])[0]!.text).toMatch(/201 files; at most 200/);
    const outside = await c.callTool({
      name: 'deployApp',
      arguments: { projectSlug: p.slug, files: { '../evil.html': 'x' } },
    });
    expect((outside.content as { text: string }[])[0]!.text).toMatch(/relative file path/);
    const notBase64 = await c.callTool({
      name: 'deployApp',
      arguments: { projectSlug: p.slug, files: { 'index.html': 'x', 'a.png': { base64: 'not base64!' } } },
    });
    expect((notBase64.content as { text: string }[])[0]!.text).toMatch(
      /^VALIDATION_ERROR: files\.a\.png\.base64: not base64/,
    );
    const big = Buffer.alloc(1024 * 1024 + 1).toString('base64');
    const tooBig = await c.callTool({
      name: 'deployApp',
      arguments: { projectSlug: p.slug, files: { 'index.html': 'x', 'big.bin': { base64: big } } },
    });
    expect((tooBig.content as { text: string }[])[0]!.text).toMatch(
      /big\.bin: 1048577 bytes; .* at most 1048576/,
    );
    const broken = await c.callTool({
      name: 'deployApp',
      arguments: { projectSlug: p.slug, files: { 'readme.txt': 'no index here' } },
    });
    expect(broken.isError).toBe(true);
    expect((broken._meta?.['dev.pier/error'] as { code: string } | undefined)?.code).toBe('ARTIFACT_INVALID');
    expect((broken.content as { text: string }[])[0]!.text).toMatch(/index\.html/);
    // An app that builds but never becomes healthy: followed to failed, with the reason.
    const crashing = await c.callTool({
      name: 'deployApp',
      arguments: {
        projectSlug: p.slug,
        files: {
          'package.json': JSON.stringify({ name: 'x', scripts: { start: 'node server.js' } }),
          'server.js': 'process.exit(3);',
        },
      },
    });
    expect(crashing.isError).toBe(true);
    const failed = crashing._meta?.['dev.pier/error'] as { status: string; code: string; message: string };
    expect(failed.status).toBe('failed');
    expect(failed.code).toBe('DEPLOYMENT_FAILED');
    expect(failed.message.length).toBeGreaterThan(0);
    await c.close();
  });
});
