import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { startGateway, startKeyBilling, type Gateway } from './harness';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
type KB = Awaited<ReturnType<typeof startKeyBilling>>;

// .ci/run installs Debian's Chromium; without it this suite cannot run at all, so it says so by name.
const describeWithBrowser = existsSync(CHROMIUM) ? describe : describe.skip;

describeWithBrowser('dashboard in real Chromium', () => {
  let kb: KB;
  let gw: Gateway;
  let browser: Browser;

  beforeAll(async () => {
    kb = await startKeyBilling();
    gw = await startGateway(kb);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
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
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await kb?.close();
  });

  it('when a user signs up, creates a key and revokes it, then the page shows the secret once and the list follows', async () => {
    const page = await browser.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${gw.url}/dashboard`);
    const email = `browser${Date.now()}@example.com`;
    await page.locator('#signup-form input[name=email]').fill(email);
    await page.locator('#signup-form input[name=password]').fill('correct horse battery');
    await page.locator('#signup-form button[type=submit]').click();

    // The overview first; without the other back ends (only key-billing here) it says what it cannot show.
    await page.waitForURL(/\/dashboard$/);
    await page.locator('#overview .stats').waitFor();
    expect(await page.locator('#overview').innerText()).toMatch(
      /Balance \(credits\)\s+500[\s\S]*Datasets\s+not available/,
    );
    expect(await page.locator('#latest').innerText()).toBe('The inference history is not available.');
    expect(await page.locator('#me-email').textContent()).toBe(email);

    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'API keys' }).click();
    await page.locator('#create-key-form').waitFor();

    await page.locator('#create-key-form input[name=name]').fill('from the browser');
    await page.locator('#create-key-form button[type=submit]').click();
    await page.locator('#new-key').waitFor({ state: 'visible' });
    const secret = (await page.locator('#new-key-value').textContent()) ?? '';
    expect(secret).toMatch(/^wst_sk_/);

    const row = page.locator('#keys-list tbody tr');
    await row.first().waitFor();
    expect(await row.count()).toBe(1);
    const rowText = (await row.first().textContent()) ?? '';
    expect(rowText).toContain('from the browser');
    expect(rowText).toContain(secret.slice(-4));
    expect(rowText).not.toContain(secret);

    // The key works against the API, then stops working once revoked in the page.
    expect((await fetch(`${gw.url}/list-api-keys`, { headers: { 'x-api-key': secret } })).status).toBe(200);
    await page.getByRole('button', { name: 'Revoke key from the browser' }).click();
    await page.locator('#keys-list', { hasText: 'No keys yet.' }).waitFor();
    expect((await fetch(`${gw.url}/list-api-keys`, { headers: { 'x-api-key': secret } })).status).toBe(401);

    await page.getByRole('link', { name: 'Credits & usage' }).click();
    await page.locator('#app .stats dd').first().waitFor();
    expect(await page.locator('#app .stats').textContent()).toContain('500');
    await page.close();
  }, 60_000);

  it('when a deep dashboard path is opened, then the shell answers with a strict CSP and the chart library is served', async () => {
    const shell = await fetch(`${gw.url}/dashboard/datasets/some-name`);
    expect(shell.status).toBe(200);
    expect(shell.headers.get('content-type')).toMatch(/text\/html/);
    const csp = shell.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await shell.text();
    expect(html).toContain('<script type="module" src="/dashboard/assets/app.js">');

    // The icon: linked from the shell, and at /favicon.ico for the pages that link none (JSON in a tab).
    expect(html).toContain('<link rel="icon" href="/dashboard/assets/favicon.svg"');
    for (const icon of ['/dashboard/assets/favicon.svg', '/favicon.ico']) {
      const res = await fetch(`${gw.url}${icon}`);
      expect({ icon, status: res.status, type: res.headers.get('content-type') }).toEqual({
        icon,
        status: 200,
        type: expect.stringMatching(/^image\/svg\+xml/),
      });
      expect(await res.text()).toContain('<title>Whetstone</title>');
    }

    const uplot = await fetch(`${gw.url}/dashboard/assets/vendor/uPlot.esm.js`);
    expect(uplot.status).toBe(200);
    expect(uplot.headers.get('content-type')).toMatch(/javascript/);
    expect(uplot.headers.get('content-security-policy')).toBe(csp);
    expect((await fetch(`${gw.url}/dashboard/assets/vendor/other.js`)).status).toBe(404);
  });
});
