import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../harness.ts';
import { uniq } from '../../harness.ts';
import { seedApiKey } from '../../seed.ts';
import { launchBrowser, shot, signUpIntoOrg, startPier } from './browser-kit.ts';

// The memory page in headless Chromium against a real Pier: an app stores memories through v1 with API
// keys; a plain member of the organization browses them, opens one with its history, tries a recall and
// sees the matching memory first with its similarity, and the sandbox's memories apart from production's.

let t: TestApp;
let base: string;
let browser: Browser;
let page: Page;
let live: string;
let sandbox: string;
const email = `${uniq('mem')}@example.com`;

async function v1(key: string, method: string, path: string, body?: unknown) {
  const r = await fetch(`${base}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await r.json();
  expect(r.status, JSON.stringify(json)).toBeLessThan(300);
  return json;
}

beforeAll(async () => {
  ({ t, base } = await startPier());
  browser = await launchBrowser();
  const ctx = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  page = await ctx.newPage();
  page.setDefaultTimeout(10_000);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('memory page in a browser', () => {
  it('a member browses memories stored through v1 and tries a recall', async () => {
    if (!t.deps.db.features.has('vector')) return; // the browser suite runs on PGlite, which has pgvector
    // Sign up in the browser, then join an organization someone else owns, as a plain member.
    const { org } = await signUpIntoOrg(page, t, base, email, 'member');
    live = (await seedApiKey(t.deps, org.id, 'live')).key;
    sandbox = (await seedApiKey(t.deps, org.id, 'test')).key;

    // The app stores memories with its API keys.
    const agent = await v1(live, 'POST', '/memory/agents', { name: 'Support bot' });
    await v1(live, 'POST', '/memory/agents', { name: 'Sales bot' });
    const batch = await v1(live, 'POST', '/memory/memories/batch', {
      agentId: agent.id,
      memories: [
        {
          content: 'The customer prefers invoices as PDF attachments',
          tags: ['billing'],
          metadata: { source: 'chat', ticket: 42 },
          confidence: 0.9,
        },
        { content: 'Invoices are due within thirty days', type: 'procedural' },
        { content: 'The office plant needs water on Fridays', type: 'episodic' },
      ],
    });
    const pdf = batch.memories[0];
    await v1(live, 'PATCH', `/memory/memories/${pdf.id}`, {
      content: 'The customer prefers invoices as PDF e-mail attachments',
    });
    await v1(sandbox, 'POST', '/memory/memories', { content: 'A sandbox-only test memory' });

    await page.goto(`${base}/memory`);
    await page.getByRole('heading', { name: 'Memory', exact: true }).waitFor();
    expect(await page.getByRole('link', { name: 'Memory' }).getAttribute('aria-current')).toBe('page');
    // The newest agent is chosen at first; every agent shows its count.
    await page.getByRole('heading', { name: /^Memories of / }).waitFor();
    expect(await page.getByTestId('agent-Support bot').textContent()).toMatch(/Support bot\s*3/);
    expect(await page.getByTestId('agent-Sales bot').textContent()).toMatch(/Sales bot\s*0/);
    await page.getByTestId('agent-Support bot').click();
    await page.getByRole('heading', { name: 'Memories of Support bot' }).waitFor();
    const rows = page.getByTestId('memory-row');
    await expect.poll(() => rows.count()).toBe(3);
    const table = await page.getByRole('table', { name: 'Memories of Support bot' }).textContent();
    expect(table).toContain('The customer prefers invoices as PDF e-mail attachments');
    expect(table).toContain('procedural');
    await shot(page, 'memory-01-list');

    // Filter by type.
    await page.getByLabel('Type').selectOption('episodic');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('office plant');
    await page.getByLabel('Type').selectOption('');
    await expect.poll(() => rows.count()).toBe(3);

    // Open one: full content, metadata, tags and its history.
    await rows.filter({ hasText: 'PDF e-mail' }).click();
    const detail = page.getByTestId('memory-detail');
    await detail.getByTestId('memory-history').waitFor();
    expect(await detail.getByTestId('memory-content').textContent()).toBe(
      'The customer prefers invoices as PDF e-mail attachments',
    );
    expect(JSON.parse((await detail.getByTestId('memory-metadata').textContent()) ?? '')).toEqual({
      source: 'chat',
      ticket: 42,
    });
    expect(await detail.textContent()).toContain('billing');
    expect(await detail.getByTestId('memory-history').textContent()).toContain(
      'The customer prefers invoices as PDF attachments',
    );
    await shot(page, 'memory-02-detail');
    await detail.getByRole('button', { name: 'Close' }).click();

    // A recall: the matching memory first, with its similarity as a number and a bar, and its leg.
    await page.getByLabel('Query').fill('invoices as PDF attachments');
    await page.getByLabel('Threshold').fill('0.1');
    await page.getByRole('button', { name: 'Recall', exact: true }).click();
    const results = page.getByTestId('recall-result');
    await results.first().waitFor();
    expect(await results.first().textContent()).toContain(
      'The customer prefers invoices as PDF e-mail attachments',
    );
    const sims = (await page.getByTestId('similarity').allTextContents()).map((s) =>
      Number(s.replace(/[^0-9.]/g, '')),
    );
    expect(sims[0]).toBeGreaterThan(0.1);
    expect(sims[0]).toBeLessThanOrEqual(1);
    // Hybrid (the default) ranks by fused rank, not by similarity: each result says which leg found it.
    expect(await results.first().getByTestId('found-by').textContent()).toMatch(
      /found by (meaning|keywords|both)/,
    );
    const barWidth = await results
      .first()
      .locator('.fill')
      .evaluate((el) => el.getBoundingClientRect().width);
    expect(barWidth).toBeGreaterThan(0);
    await shot(page, 'memory-03-recall');
    // Looking is not using: the recalled memory's access count is unchanged.
    const after = await v1(live, 'GET', `/memory/memories/${pdf.id}`);
    expect(after.accessCount).toBe(0);

    // The sandbox holds only what test keys stored.
    await page.getByLabel('Sandbox (test keys)').check();
    await page.getByRole('heading', { name: 'All memories' }).waitFor();
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('A sandbox-only test memory');
    expect(await page.getByText('No agents in this environment yet.').isVisible()).toBe(true);
    await shot(page, 'memory-04-sandbox');
  });
  it('the recall panel shows where each fact came from and what it superseded', async () => {
    if (!t.deps.db.features.has('vector')) return;
    // The app adds a conversation with inference (rules: no model here), then a fuller statement.
    const agent = await v1(live, 'POST', '/memory/agents', { name: 'Companion', infer: true });
    const said = '2026-03-10T09:00:00Z';
    await v1(live, 'POST', '/memory/memories/add', {
      agentId: agent.id,
      messages: [
        {
          role: 'user',
          content: 'I moved to Lisbon last month, the Berlin flat is sold.',
          id: 'chat-7',
          createdAt: said,
        },
      ],
    });
    const upd = await v1(live, 'POST', '/memory/memories/add', {
      agentId: agent.id,
      messages: [{ role: 'user', content: 'The Berlin flat is sold to a friend.', createdAt: said }],
    });
    expect(upd.results[0].event).toBe('UPDATE');

    await page.getByLabel(/^Production/).check();
    await page.getByTestId('agent-Companion').click();
    await page.getByRole('heading', { name: 'Memories of Companion' }).waitFor();
    await page.getByLabel('Query').fill('Berlin flat sold');
    await page.getByLabel('Threshold').fill('');
    await page.getByRole('button', { name: 'Recall', exact: true }).click();
    const first = page.getByTestId('recall-result').first();
    await first.getByTestId('lineage').waitFor();
    expect(await first.textContent()).toContain('The Berlin flat is sold to a friend.');
    expect(await first.getByTestId('lineage-source').textContent()).toMatch(
      /Extracted from message 1 \(user.*\): .*The Berlin flat is sold to a friend\./,
    );
    expect(await first.getByTestId('lineage-supersedes').textContent()).toContain('The Berlin flat is sold.');
    // The Lisbon fact: from the first conversation's message (its client id kept), about February 2026.
    await page.getByLabel('Query').fill('moved to Lisbon');
    await page.getByRole('button', { name: 'Recall', exact: true }).click();
    const lisbon = page.getByTestId('recall-result').filter({ hasText: 'I moved to Lisbon last month.' });
    await lisbon.getByTestId('lineage').waitFor();
    expect(await lisbon.getByTestId('lineage-source').textContent()).toContain('id chat-7');
    expect(await lisbon.getByTestId('lineage-time').textContent()).toMatch(/February 2026/);
    await shot(page, 'memory-05-recall-lineage');

    // The superseded memory's history says which decision archived it, and why.
    const old = upd.results[0].previous.id;
    const detail = await v1(live, 'GET', `/memory/memories/${old}/history`);
    expect(detail.items.at(-1)).toMatchObject({ event: 'superseded', decision: 'UPDATE' });
  });
});
