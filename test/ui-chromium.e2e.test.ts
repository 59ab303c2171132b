/**
 * The timeline a person looks at, in a real headless Chromium (Debian's `chromium`, or
 * LOOPGUARD_CHROMIUM): `loopguard ui` and `audit --html` pages load without console errors and show
 * the stopped call with its rule. Without a browser this fails; it never skips. Screenshots go to
 * test-artifacts/ (git-ignored).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { type OpenStore, openEmbeddedStore } from '../src/cli/open-store.js';
import { startUiServer, type UiServer } from '../src/cli/ui-server.js';
import { captureIo } from './support/capture-io.js';

const examples = join(import.meta.dirname, '..', 'examples');
const artefacts = join(import.meta.dirname, '..', 'test-artifacts');
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

let dir: string;
let store: OpenStore;
let ui: UiServer;
let browser: Browser;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lg-ui-'));
  mkdirSync(artefacts, { recursive: true });
  const data = join(dir, 'data');
  const code = await main(
    ['replay', join(examples, 'runs.jsonl'), '--policy', join(examples, 'policy.json'), '--data-dir', data],
    captureIo(),
    { env: {} },
  );
  expect(code).toBe(0);
  store = await openEmbeddedStore(data);
  ui = await startUiServer({ scan: (apply) => store.scan(apply) }, 0);
  browser = await chromium.launch({ executablePath: process.env.LOOPGUARD_CHROMIUM ?? '/usr/bin/chromium' });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await ui?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A page that records every console error, page error and failed or non-2xx request. */
async function watchedPage(): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  return { page, problems };
}

async function screenshot(page: Page, name: string): Promise<void> {
  const path = join(artefacts, name);
  await page.screenshot({ path, fullPage: true });
  expect(readFileSync(path).subarray(0, 4)).toEqual(PNG_MAGIC);
}

describe('loopguard ui in Chromium', () => {
  it('filters the run list by state and shows the stopped call and its rule in the timeline', async () => {
    const { page, problems } = await watchedPage();
    await page.goto(ui.url);
    expect(await page.locator('#runs tbody tr').count()).toBe(6);
    await page.selectOption('select[name=state]', 'STOPPED_LOOP_GUARD');
    await Promise.all([page.waitForURL(/state=STOPPED_LOOP_GUARD/), page.click('#filters button')]);
    const listed = await page
      .locator('#runs tbody tr')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id')));
    expect(listed).toEqual(['demo/exact-repeat', 'demo/ping-pong']);
    await screenshot(page, 'ui-run-list.png');

    await Promise.all([page.waitForURL(/\/run\?id=/), page.click('text=demo/exact-repeat')]);
    const stopped = page.locator('tr.call.stopped');
    expect(await stopped.count()).toBe(1);
    expect(await stopped.getAttribute('data-call-id')).toBe('step-2');
    expect(await stopped.locator('.rule').textContent()).toBe('exact_repeat');
    expect(await page.locator('#run-state').textContent()).toBe('STOPPED_LOOP_GUARD');
    expect(await page.locator('#stop-report').textContent()).toContain('exact_repeat');
    expect(await page.locator('figure.chart').count()).toBe(4);
    await screenshot(page, 'ui-run-timeline.png');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('audit --html writes one self-contained file: the stopped call offline, and the ledger of a side effect', async () => {
    const data = join(dir, 'data');
    const stoppedFile = join(dir, 'permission.html');
    const paymentFile = join(dir, 'payment.html');
    for (const [run, file] of [
      ['demo/permission-error', stoppedFile],
      ['demo/duplicate-payment', paymentFile],
    ] as const)
      expect(await main(['audit', run, '--html', file, '--data-dir', data], captureIo())).toBe(0);
    const { page, problems } = await watchedPage();
    // Nothing but the file itself may load: no script, style sheet or image from anywhere else.
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(pathToFileURL(stoppedFile).href);
    expect(requests).toEqual([pathToFileURL(stoppedFile).href]);
    expect(await page.locator('tr.call.stopped').count()).toBe(1);
    expect(await page.locator('#run-state').textContent()).toBe('NEEDS_HUMAN');
    expect(await page.locator('#stop-report').textContent()).toContain('permission_denied');
    await screenshot(page, 'audit-html-stopped.png');

    await page.goto(pathToFileURL(paymentFile).href);
    const ledger = await page.locator('#ledger tbody tr').allInnerTexts();
    expect(ledger.map((r) => r.split('\t').slice(0, 3))).toEqual([
      ['charge:A1', 'completed', 'step-1'],
      ['receipt:A1', 'completed', 'step-3'],
    ]);
    expect(await page.locator('tr.call.cached').getAttribute('data-call-id')).toBe('step-2');
    await screenshot(page, 'audit-html-ledger.png');
    expect(problems).toEqual([]);
    await page.close();
  });
});
