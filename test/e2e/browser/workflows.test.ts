import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../harness.ts';
import { uniq } from '../../harness.ts';
import { seedApiKey, seedProject } from '../../seed.ts';
import { launchBrowser, shot, signUpIntoOrg, startPier } from './browser-kit.ts';

// The workflows pages in headless Chromium against a real Pier with its engine: an app runs a three-step
// workflow through v1; a member opens the list, then the finished run, and sees one bar per step, the
// graph's boxes and arrows, and the output; a run's steps show their attempts (each with its error), inputs
// and outputs.

let t: TestApp;
let base: string;
let browser: Browser;
let page: Page;
const email = `${uniq('wf')}@example.com`;

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

// A stock service that is down: 503, then 500.
let stock: http.Server;
let stockUrl: string;
const answers = [503, 500];

beforeAll(async () => {
  stock = http.createServer((req, res) => {
    req.resume();
    res.writeHead(answers.shift() ?? 500).end('down');
  });
  await new Promise<void>((ok) => stock.listen(0, '127.0.0.1', ok));
  stockUrl = `http://127.0.0.1:${(stock.address() as AddressInfo).port}`;
  ({ t, base } = await startPier({ OUTBOUND_ALLOW: '127.0.0.1/32' }, { background: true }));
  browser = await launchBrowser();
  const ctx = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  page = await ctx.newPage();
  page.setDefaultTimeout(10_000);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  stock?.close();
});

describe('workflows pages in a browser', { timeout: 60_000 }, () => {
  it('a member opens a completed run and sees one bar per step', async () => {
    const { org } = await signUpIntoOrg(page, t, base, email, 'member');
    const live = (await seedApiKey(t.deps, org.id, 'live')).key;
    const projectSlug = (await seedProject(t.deps, org)).slug;

    const wf = await v1(live, 'POST', '/workflows', {
      projectSlug,
      slug: 'sums',
      name: 'Sums',
      steps: [
        { id: 'a', type: 'transform', expression: '1' },
        { id: 'b', type: 'transform', expression: '2' },
        { id: 'c', type: 'transform', expression: '3', dependsOn: ['a', 'b'] },
      ],
    });
    const started = await v1(live, 'POST', `/workflows/${wf.id}/run`, { projectSlug });
    let run = started;
    for (let i = 0; i < 200 && !['completed', 'failed', 'cancelled'].includes(run.status); i++) {
      await new Promise((r) => setTimeout(r, 100));
      run = await v1(live, 'GET', `/workflows/runs/${started.id}`);
    }
    expect(run.status).toBe('completed');

    await page.goto(`${base}/workflows`);
    await page.getByRole('heading', { name: /Sums/ }).waitFor();
    await page.getByRole('link', { name: started.id.slice(0, 8) }).click();
    await page.getByTestId('timeline').waitFor();
    const bars = page.getByTestId('timeline-bar');
    expect(await bars.count()).toBe(3);
    expect(await bars.evaluateAll((g) => g.map((x) => x.getAttribute('data-status')))).toEqual([
      'completed',
      'completed',
      'completed',
    ]);
    expect(await page.getByTestId('graph-node').count()).toBe(3);
    expect(await page.getByTestId('graph-edge').count()).toBe(2);
    await expect.poll(() => page.getByTestId('run-output').textContent()).toContain('{');
    await shot(page, 'workflow-run');
  });
  it("shows a run's step details, a waiting approval, rounded credits and the trigger that started it", async () => {
    const { org } = await signUpIntoOrg(page, t, base, `${uniq('wf2')}@example.com`, 'member');
    const live = (await seedApiKey(t.deps, org.id, 'live')).key;
    const projectSlug = (await seedProject(t.deps, org)).slug;
    const wf = await v1(live, 'POST', '/workflows', {
      projectSlug,
      slug: 'invoice',
      name: 'Invoice',
      variables: { sku: { type: 'string', default: 'SKU-9' } },
      steps: [
        {
          id: 'flaky',
          type: 'http',
          url: `${stockUrl}/stock/{{sku}}`,
          retry: { maxAttempts: 2, backoffMs: 10 },
          continueOnError: true,
        },
        { id: 'c1', type: 'code', code: 'return 1' },
        { id: 'c2', type: 'code', code: 'return 2' },
        { id: 'c3', type: 'code', code: 'return 3' },
        { id: 'big', type: 'transform', expression: '$pad("", 10000, "x")' },
        { id: 'ok', type: 'wait', wait: { approval: {} }, dependsOn: ['c1', 'c2', 'c3', 'big', 'flaky'] },
      ],
      triggers: { events: [{ name: 'invoice.ready' }] },
    });
    const runId = (await v1(live, 'POST', '/workflows/events', { name: 'invoice.ready', payload: {} }))
      .runs[0].runId;
    let run = await v1(live, 'GET', `/workflows/runs/${runId}`);
    for (let i = 0; i < 300 && run.stepStates.ok.status !== 'waiting'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      run = await v1(live, 'GET', `/workflows/runs/${runId}`);
    }
    expect(run.stepStates.ok.status).toBe('waiting');

    await page.goto(`${base}/workflows`);
    const triggers = page.getByTestId('workflow-triggers');
    await triggers.waitFor();
    expect(await triggers.textContent()).toContain('Event invoice.ready');
    await page.getByTestId('trigger-fire').getByRole('link').first().click();
    await page.getByTestId('run-status').waitFor();
    const status = (await page.getByTestId('run-status').textContent()) ?? '';
    expect(status).toContain('0.03 credits');
    expect(status).toContain('by event invoice.ready');
    const big = page.locator('[data-testid="step-detail"][data-step="big"]');
    await big.locator('summary').click();
    expect(((await big.getByTestId('step-output').textContent()) ?? '').length).toBeLessThan(4100);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      big.getByTestId('step-download').click(),
    ]);
    expect(download.suggestedFilename()).toBe(`${runId}-big.json`);
    const ok = page.locator('[data-testid="step-detail"][data-step="ok"]');
    await ok.locator('summary').click();
    expect(await ok.getByTestId('step-wait').textContent()).toContain('Waits for an approval');
    expect(await ok.getByRole('link', { name: 'Open the approval page' }).getAttribute('href')).toContain(
      '/workflows/approvals/',
    );
    // Each attempt with its own error, and the input the step was given (the run's variables filled in).
    const flaky = page.locator('[data-testid="step-detail"][data-step="flaky"]');
    await flaky.locator('summary').click();
    const rows = flaky.getByTestId('step-attempts').locator('tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(0).textContent()).toContain('failed, retried');
    expect(await rows.nth(0).textContent()).toContain(`HTTP 503 from ${stockUrl}/stock/SKU-9.`);
    expect(await rows.nth(1).locator('td').nth(3).textContent()).toBe('failed');
    expect(await rows.nth(1).textContent()).toContain('HTTP 500');
    expect(await flaky.getByTestId('step-input').textContent()).toContain(`"url": "${stockUrl}/stock/SKU-9"`);
    await shot(page, 'workflow-run-steps');
    await v1(live, 'POST', `/workflows/runs/${runId}/cancel`);
    expect(wf.id).toBeTruthy();
  });
});
