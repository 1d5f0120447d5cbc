// The dashboard in headless Chromium, driven by Playwright: what a reviewer
// does on it after a real flow (see tests/integration/dashboard.sh, which
// starts kfixd and passes what it made in the environment).
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
const ADMIN = env('KFIX_ADMIN_TOKEN');
const BUG = env('KFIX_PATCH_BUG');      // a bug with a published patch v1
const PATCH = env('KFIX_PATCH_ID');
const LIVE_JOB = env('KFIX_LIVE_JOB');  // a self-test job still running
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
  const dialogs = [];
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
  const cspViolations = [];
  page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text()); });
  const shot = (name) => page.screenshot({ path: `${OUT}/${name}.png`, fullPage: true });

  async function login(token) {
    await page.goto(`${URL}/`);
    assert.match(page.url(), /\/ui\/login$/, 'a page without a session sends to the login form');
    await page.fill('input[name=token]', token);
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
  }

  // a wrong token is refused, with a message and no session
  await login('not-the-token');
  assert.equal(await page.locator('#login-error').count(), 1, 'wrong token: an error on the form');
  assert.equal((await ctx.cookies()).length, 0, 'wrong token: no cookie');
  step('a wrong token is refused');

  // the read token: the bug list
  await login(READ);
  assert.match(page.url(), /\/ui\/bugs$/);

  // a job's trajectory, and its progress changing while it runs
  await page.goto(`${URL}/ui/jobs/${LIVE_JOB}`);
  let navigations = 0;
  page.on('framenavigated', (f) => { if (f === page.mainFrame()) navigations++; });
  assert.notEqual(await page.locator('#live-state').textContent(), 'done',
    'the self-test job ended before its page was seen: too slow a machine?');
  const first = await page.locator('#live-progress').textContent();
  await page.waitForFunction((t) => document.getElementById('live-progress').textContent !== t,
    first, { timeout: 90000 });
  const later = await page.locator('#live-progress').textContent();
  assert.equal(navigations, 0, 'progress updated without a reload');
  await page.waitForFunction(() => document.getElementById('live-state').textContent === 'done',
    null, { timeout: 90000 });
  assert.equal(navigations, 0, 'still no reload');
  await page.reload();
  assert.ok(await page.locator('#trajectory tr.event').count() >= 4, 'the trajectory has the steps');
  await shot('job');
  step(`live progress: "${first}" -> "${later}" -> done, then the trajectory`);

  await page.goto(`${URL}/ui/bugs`);
  const cookie = (await ctx.cookies()).find((c) => c.name === 'kfix_session');
  assert.ok(cookie && cookie.httpOnly && cookie.sameSite === 'Strict', 'session cookie is HttpOnly, SameSite=Strict');
  assert.ok(!cookie.value.includes(READ), 'the token is not in the cookie');
  const rows = page.locator('#bugs tbody tr.bug');
  assert.ok(await rows.count() >= 2, 'both bugs listed');
  const titles = await page.locator('#bugs td.title').allTextContents();
  assert.ok(titles.some((t) => t.includes('<script>')), `a title with <script> shown as text: ${titles}`);
  assert.equal(await page.locator('script').count(), 1, 'no script element but the dashboard\'s');
  const published = rows.filter({ hasText: '<script>' }).locator('td:nth-child(6)');
  assert.equal(await published.textContent(), '1', 'the published bug shows its one patch version');
  await shot('bugs');
  step('bug list after login, hostile title shown as text');

  // filters
  await page.selectOption('select[name=state]', 'awaiting-approval');
  await Promise.all([page.waitForNavigation(), page.click('#filters button')]);
  const states = await page.locator('#bugs tbody tr.bug td:nth-child(2)').allTextContents();
  assert.ok(states.length >= 1 && states.every((s) => s === 'awaiting-approval'), `filtered: ${states}`);
  step('state filter');

  // a bug: its patch, its mails, no moderation for a reader
  await page.goto(`${URL}/ui/bugs/${BUG}`);
  const patch = page.locator(`#patch-${PATCH}`);
  assert.equal(await patch.count(), 1, 'patch section');
  assert.match(await patch.locator('pre.diff').textContent(), /\+\s*if \(!x\)/, 'the diff');
  assert.match(await patch.locator('table.repro').textContent(), /crashed 3 of 3/, 'the reproduction table');
  const subjects = await page.locator('#mails summary.subject').allTextContents();
  assert.ok(subjects.some((s) => s.endsWith("<script>alert('subject')</script> ignore NULL in slab_free()")),
    `the mail's whole subject, <script> as text: ${subjects}`);
  assert.equal(await page.locator('form.approve').count(), 0, 'a reader gets no approve form');
  assert.equal(await page.locator('script').count(), 1, 'no injected script on the bug page');
  await shot('bug');
  step('bug page: patch, diff, reproduction table, mails');

  // a session cannot act without the form's token (CSRF), even same-site
  const forged = await page.evaluate(async (id) => {
    const r = await fetch(`/ui/patches/${id}/reject`, { method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'reason=x' });
    return r.status;
  }, PATCH);
  assert.equal(forged, 403, 'a POST without the form token is refused');

  // the admin token: approve through the page
  await page.click('nav button');  // log out
  await login(ADMIN);
  await page.goto(`${URL}/ui/bugs/${BUG}`);
  await page.fill(`#patch-${PATCH} form.approve input[name=by]`, 'Mod Erator <mod@example.org>');
  await shot('approve');
  await Promise.all([page.waitForNavigation(), page.click(`#patch-${PATCH} form.approve button`)]);
  assert.match(page.url(), new RegExp(`/ui/bugs/${BUG}`), 'back on the bug page');
  const state = await page.locator(`#patch-${PATCH} .patch-state`).textContent();
  assert.ok(['approved', 'sent'].includes(state), `patch state after approval: ${state}`);
  assert.equal(await page.locator(`#patch-${PATCH} form.approve`).count(), 0, 'no second approval');
  await shot('approved');
  step(`approved through the page: ${state}`);

  await page.goto(`${URL}/ui/hosts`);
  assert.equal(await page.locator('#queues').count(), 1);
  assert.equal(await page.locator('#budget').count(), 1);
  await shot('hosts');
  step('hosts, queues and budget');

  assert.deepEqual(dialogs, [], 'no script ran from stored text');
  assert.deepEqual(cspViolations, [], 'no Content-Security-Policy violation');
} catch (e) {
  failed = true;
  console.error(`FAIL: ${e.stack || e}`);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
