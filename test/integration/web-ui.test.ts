/**
 * The Temporal Web UI, driven by a real headless Chromium (Debian's /usr/bin/chromium, through
 * playwright-core; no browser download): the workflow list filtered by `WardenState` shows the
 * escalated agent and not the running one, and the escalated agent's page shows its current
 * details (the workflow's `setCurrentDetails` markdown) and its static summary.
 * Screenshots go to test/screenshots/ (gitignored).
 */
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { WardenClient } from '../../src/client/index.js';
import { freePorts } from '../../src/devserver/ports.js';
import type { WorkerHandle } from '../../workers/main.js';
import { productiveTurn, reportWithEvaluations, spiralTurn } from '../helpers/agents.js';
import { ROOT, cleanup, clientFor, eventually, inProcessWorker, startTestServer, type TestServer } from '../helpers/stack.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(ROOT, 'test/screenshots');
const haveChromium = existsSync(CHROMIUM);

// Locally, no Chromium means the tests are skipped, and the log says why. In CI they must not be:
// .ci/run installs Chromium, and if it is still missing every test here fails saying so.
const skip = !haveChromium && !process.env.CI;
if (skip) console.warn(`web-ui.test.ts skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);

const ESCALATED = 'ui-spiral';
const RUNNING = 'ui-worker';
const TASK = 'Make `npm run build` pass.';
const ROW = '[data-testid="workflows-summary-configurable-table-row"]';

let server: TestServer;
let worker: WorkerHandle;
let warden: WardenClient;
let context: BrowserContext;
let page: Page;
let userDataDir: string | undefined;

beforeAll(async () => {
  if (skip) return;
  if (!haveChromium) {
    throw new Error(
      `CI is set but ${CHROMIUM} is missing: .ci/run should have installed Debian's chromium (apt-get install -y chromium); the Web UI test cannot run without it`,
    );
  }
  const [port, uiPort] = await freePorts(2); // distinct: the gRPC port and the Web UI's
  server = await startTestServer({ port, uiPort });
  worker = await inProcessWorker(server);
  warden = await clientFor(server);
  expect(server.uiUrl).toBe(`http://127.0.0.1:${uiPort}`);

  // One agent escalated (15 spiraling turns → step 3/3, awaiting-input), one still running.
  await warden.start({ agentId: ESCALATED, task: TASK });
  await reportWithEvaluations(
    warden,
    ESCALATED,
    Array.from({ length: 15 }, (_, i) => spiralTurn(i + 1)),
  );
  await warden.start({ agentId: RUNNING, task: 'Refactor the config loader.' });
  await reportWithEvaluations(warden, RUNNING, [1, 2, 3].map(productiveTurn));
  expect(await warden.status(ESCALATED)).toMatchObject({ state: 'awaiting-input', escalationStep: 3, paused: true });
  expect(await warden.status(RUNNING)).toMatchObject({ state: 'running', escalationStep: 0, paused: false });

  // Debian's Chromium, never a downloaded one; a fresh profile; no background networking (the
  // machine's network is closed, and Chromium would otherwise keep trying Google's hosts).
  userDataDir = mkdtempSync(join(tmpdir(), 'warden-chromium-'));
  mkdirSync(SHOTS, { recursive: true });
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1600, height: 1000 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(30_000);
});

afterAll(async () => {
  await context?.close();
  await warden?.close();
  await worker?.shutdown();
  await server?.stop();
  if (userDataDir) cleanup(userDataDir);
  if (server) cleanup(server.dir);
});

/**
 * Open the workflow list filtered by `query`, wait until the row of `expectWorkflowId` has been
 * rendered (the UI fetches and renders client-side), and return every workflow id in the table.
 */
async function listedWorkflowIds(query: string, expectWorkflowId: string): Promise<string[]> {
  const url = `${server.uiUrl}/namespaces/default/workflows?query=${encodeURIComponent(query)}`;
  return eventually(
    async () => {
      await page.goto(url);
      await page.locator(ROW, { hasText: expectWorkflowId }).first().waitFor({ timeout: 10_000 });
      const hrefs = await page.$$eval(`${ROW} a[href*="/workflows/"]`, (as) => as.map((a) => a.getAttribute('href') ?? ''));
      return [...new Set(hrefs.map((h) => /\/namespaces\/default\/workflows\/([^/?]+)/.exec(h)?.[1]).filter((x): x is string => !!x))]
        .map(decodeURIComponent)
        .sort();
    },
    { timeoutMs: 60_000, intervalMs: 1_000, what: `${expectWorkflowId} listed for ${query}` },
  );
}

test.skipIf(skip)('the workflow list filtered by WardenState="awaiting-input" shows the escalated agent, not the running one', async () => {
  const ids = await listedWorkflowIds('WardenState="awaiting-input"', `agent-${ESCALATED}`);
  expect(ids).toEqual([`agent-${ESCALATED}`]);
  // The whole page, not only the table rows: the running agent appears nowhere.
  const text = await page.locator('main').innerText();
  expect(text).toContain(`agent-${ESCALATED}`);
  expect(text).not.toContain(`agent-${RUNNING}`);
  expect(text).toMatch(/^1\s+Workflow$/m); // the header count
  await page.screenshot({ path: join(SHOTS, 'list-awaiting-input.png'), fullPage: true });

  // The control: the same page filtered by the other state lists the running agent, so the filter
  // (and not an empty table) is what kept it out above.
  expect(await listedWorkflowIds('WardenState="running"', `agent-${RUNNING}`)).toEqual([`agent-${RUNNING}`]);
});

test.skipIf(skip)("the escalated agent's page shows its current details and its summary", async () => {
  await page.goto(`${server.uiUrl}/namespaces/default/workflows/agent-${ESCALATED}`);
  // The UI redirects to the latest run; its header names the workflow.
  await page.waitForURL(new RegExp(`/namespaces/default/workflows/agent-${ESCALATED}/[0-9a-f-]{36}/`));
  await page
    .getByRole('heading', { name: `agent-${ESCALATED}` })
    .first()
    .waitFor();
  // Summary, Details and Current Details live under the "User Metadata" tab, each markdown
  // rendered in its own iframe (src /render?content=<markdown>).
  await page.getByTestId('user-metadata-tab').click();
  await page.waitForURL(/\/user-metadata$/);
  const current = page.frameLocator('#user-metadata-current-details');
  await current.locator('strong', { hasText: 'escalation step' }).waitFor();

  // What the UI was given: the workflow's setCurrentDetails markdown, verbatim.
  const markdown = (id: string) =>
    page
      .locator(`iframe#${id}`)
      .getAttribute('src')
      .then((src) => new URL(src ?? '', server.uiUrl!).searchParams.get('content') ?? '');
  const details = await markdown('user-metadata-current-details');
  expect(details).toContain('**state** awaiting-input');
  expect(details).toContain('**escalation step** 3/3');
  expect(details).toMatch(/\*\*last verdict\*\* CORRECTION SPIRALING/);

  // What it shows: the markdown rendered (bold labels; "3/3" typeset as a fraction, 3⁄3).
  const shown = (await current.locator('body').innerText()).replace(/\u2044/g, '/');
  expect(shown).toMatch(/^state awaiting-input \(escalated: SPIRALING/m);
  expect(shown).toMatch(/^escalation step 3\/3$/m);
  expect(shown).toMatch(/^last verdict CORRECTION SPIRALING/m);
  expect(shown).toMatch(/^turns 15 · evaluations 3 \(3 flagged, 0 skipped\)$/m);
  expect(await current.locator('strong').allInnerTexts()).toEqual(expect.arrayContaining(['state', 'escalation step', 'last verdict']));

  // The static summary, set when the agent was started.
  const summarySrc = await markdown('user-metadata-summary');
  expect(summarySrc).toBe(`Supervising ${ESCALATED}: ${TASK}`);
  const summary = page.frameLocator('#user-metadata-summary');
  expect((await summary.locator('body').innerText()).trim()).toBe(`Supervising ${ESCALATED}: Make npm run build pass.`);
  expect(await summary.locator('code').innerText()).toBe('npm run build');

  await page.screenshot({ path: join(SHOTS, 'agent-details.png'), fullPage: true });
});
