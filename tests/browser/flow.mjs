// The dashboard in headless Chromium after the real-kernel flow
// (tests/kernel/e2e.sh): what a reviewer reads of a bug kfix fixed on a
// real kernel -- its two patch versions, the mails and the review, and the
// repair job's trajectory with its files.  Read-only: the flow has already
// been moderated by mail.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const URL = env('KFIX_URL');
const OUT = env('KFIX_ARTIFACTS');
const READ = env('KFIX_READ_TOKEN');
const BUG = env('KFIX_BUG');
const SUBJECT = env('KFIX_SUBJECT');       // the v1 patch's subject
const REPAIR_JOB = env('KFIX_REPAIR_JOB');
const REVIEWER = env('KFIX_REVIEWER');     // a Reviewed-by the flow mailed in
mkdirSync(OUT, { recursive: true });

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const step = (what) => console.log(`ok: ${what}`);
let failed = false;

try {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  const cspViolations = [];
  page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text()); });
  const shot = (name) => page.screenshot({ path: `${OUT}/${name}.png`, fullPage: true });

  await page.goto(`${URL}/`);
  await page.fill('input[name=token]', READ);
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
  assert.match(page.url(), /\/ui\/bugs$/, 'logged in to the bug list');
  const row = page.locator('#bugs tbody tr.bug').filter({ has: page.locator(`a[href="/ui/bugs/${BUG}"]`) });
  assert.equal(await row.count(), 1, 'the bug is listed');
  assert.equal(await row.locator('td:nth-child(6)').textContent(), '2', 'with its two patch versions');
  await shot('flow-bugs');
  step('bug list: the bug and its two versions');

  await page.goto(`${URL}/ui/bugs/${BUG}`);
  const v1 = page.locator('section.patch').filter({ hasText: SUBJECT }).first();
  assert.equal(await page.locator('section.patch').count(), 2, 'two patch sections');
  assert.ok((await page.locator('.patch-state').allTextContents()).includes('sent'), 'v1 was sent');
  assert.match(await v1.locator('pre.diff').textContent(), /^[-+]/m, 'v1 has its diff');
  assert.match(await page.locator('table.repro').first().textContent(), /crashed/,
    'the reproduction table shows the base kernel crashing');
  const subjects = await page.locator('#mails summary.subject').allTextContents();
  for (const want of [`[PATCH RFC] ${SUBJECT}`, `[PATCH] ${SUBJECT}`, `[PATCH RFC v2] ${SUBJECT}`])
    assert.ok(subjects.some((s) => s.includes(want)), `mail "${want}" listed: ${subjects}`);
  assert.match(await page.locator('#replies').textContent(), new RegExp(`Reviewed-by: ${REVIEWER}`),
    'the reviewer\'s trailer is shown');
  const kinds = await page.locator('#jobs td:nth-child(2)').allTextContents();
  for (const k of ['reproduce', 'repair', 'iterate'])
    assert.ok(kinds.includes(k), `job ${k} listed: ${kinds}`);
  assert.equal(await page.locator('form.approve').count(), 0, 'a reader gets no approve form');
  await shot('flow-bug');
  step('bug page: both versions, the three mails, the review, the jobs');

  await page.goto(`${URL}/ui/jobs/${REPAIR_JOB}`);
  assert.equal(await page.locator('#live-state').textContent(), 'done', 'the repair job is done');
  const events = page.locator('#trajectory tr.event');
  assert.ok(await events.count() >= 10, `a trajectory of the real run: ${await events.count()} events`);
  const evKinds = await page.locator('#trajectory tr.event td:nth-child(4)').allTextContents();
  for (const k of ['llm.call', 'tool.build', 'tool.run'])
    assert.ok(evKinds.includes(k), `a ${k} event: ${[...new Set(evKinds)]}`);
  const end = page.locator('#trajectory tr.event').filter({ has: page.locator('td:nth-child(4)', { hasText: /^run\.end$/ }) });
  assert.equal(await end.locator('td:nth-child(8)').textContent(), 'validated', 'the run ended validated');
  assert.match(await page.locator('#traj-summary').textContent(), /[1-9]\d* model calls/, 'model calls counted');
  await shot('flow-job');
  const traj = page.locator('#files a', { hasText: /^trajectory\.jsonl$/ });
  assert.equal(await traj.count(), 1, 'the trajectory file is offered');
  const [resp] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/files/trajectory.jsonl')),
    traj.click()]);
  assert.match(resp.headers()['content-type'], /^text\/plain/, 'a job file is served as text');
  assert.match(await resp.text(), /^\{"id": ?\d/, 'the file\'s content');
  step('repair job: trajectory with model, build and run steps, verdict validated, files');

  assert.deepEqual(cspViolations, [], 'no Content-Security-Policy violation');
} catch (e) {
  failed = true;
  console.error(`FAIL: ${e.stack || e}`);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
