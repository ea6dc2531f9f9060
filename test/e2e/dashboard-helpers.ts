import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import axe from 'axe-core';
import { chromium, type Browser, type Page, type Response } from 'playwright-core';
import type { FakeUpstream } from '@whetstone/testing';
import { ADMIN_TOKEN } from './compat-helpers';

/** Debian's Chromium, which .ci/run installs; never a browser download. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
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
}

/** axe-core's serious and critical violations on the page as it is now, one line each. */
export async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(axe.source);
  // Browser-side code as a string: this project's TypeScript has no DOM types.
  return (await page.evaluate(`axe.run(document).then((r) => r.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => v.id + ' (' + v.impact + '): ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))`)) as string[];
}

/** The system's environment with one fake OpenAI-compatible upstream serving `model` (loopback allowed). */
export function chatUpstreamEnv(upstream: FakeUpstream, model: string): Record<string, string> {
  return {
    ADMIN_TOKEN,
    UPSTREAM_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
    E2E_DASH_OPENAI_KEY: upstream.apiKey,
    CATALOG_UPSTREAMS: JSON.stringify([
      {
        name: 'fake-openai',
        kind: 'openai-compatible',
        base_url: upstream.url,
        api_key_env: 'E2E_DASH_OPENAI_KEY',
        models: [{ id: model, price: { unit: '1m', input: 100, output: 400 } }],
      },
    ]),
  };
}

/** A JSON POST with the team's key; the parsed answer, or an error naming the status. */
export async function postJson<T>(base: string, p: string, apiKey: string, body: unknown): Promise<T> {
  const res = await fetch(`${base}${p}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST ${p}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<T>;
}

/**
 * Ten corrected inferences of a project through the API (a person and a place each), with its judge off so
 * the batch costs no judge calls: enough feedback for an adaptation to train on.
 */
export async function seedCorrections(base: string, apiKey: string, projectId: string): Promise<void> {
  const api = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${base}${p}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  await api('PUT', `/projects/${projectId}/judge`, { enabled: false, sample_rate: 0 });
  for (let i = 0; i < 10; i++) {
    const person = `Quorin${String.fromCharCode(97 + i)} Vale`;
    const place = `Marrowby${String.fromCharCode(97 + i)}`;
    const { inference_id } = await api('POST', `/projects/${projectId}/inference`, {
      text: `${person} opened a bakery in ${place} this spring.`,
      schema: { entities: ['person', 'location', 'organization', 'misc'] },
    });
    await api('POST', `/inferences/${String(inference_id)}/feedback`, {
      verdict: 'incorrect',
      corrected_output: { entities: { person: [person], location: [place], organization: [], misc: [] } },
    });
  }
}

/**
 * What the overview page shows: whether the nav marks it current, its stat cards by label, the next steps (and
 * how many are done), and the latest inferences.
 */
export async function overviewOf(page: Page): Promise<{
  current: string | null;
  stats: Record<string, string>;
  steps: string[];
  done: number;
  latest: string;
}> {
  await page.locator('#overview .stats').waitFor();
  const current = await page
    .getByRole('navigation', { name: 'Dashboard' })
    .getByRole('link', { name: 'Overview' })
    .getAttribute('aria-current');
  const terms = await page.locator('#overview dt').allInnerTexts();
  const values = await page.locator('#overview dd').allInnerTexts();
  const steps = await page.locator('#next-steps li a').allInnerTexts();
  return {
    current,
    stats: Object.fromEntries(terms.map((t, i) => [t, values[i]!])),
    steps,
    done: await page.locator('#next-steps li.done').count(),
    latest: await page.locator('#latest').innerText(),
  };
}

/**
 * The first load of `url`, until `ready` is on the page: the scripts fetched (count, bytes, gzipped bytes) and
 * the time until the first page rendered (`performance.mark('dashboard-interactive')`), also written to
 * `<dir>/first-load.json` where a reviewer can read it (docs/dashboard.md quotes a run).
 */
export async function firstLoadOf(
  page: Page,
  url: string,
  ready: string,
  dir: string,
): Promise<{
  response: Response | null;
  firstLoad: { scripts: number; js_bytes: number; js_gzip_bytes: number; interactive_ms: number | null };
}> {
  const scripts: Promise<Buffer>[] = [];
  const onResponse = (r: Response) => {
    if (/javascript/.test(r.headers()['content-type'] ?? '')) scripts.push(r.body());
  };
  page.on('response', onResponse);
  const response = await page.goto(url);
  await page.locator(ready).waitFor();
  const interactiveMs = (await page.evaluate(
    "performance.getEntriesByName('dashboard-interactive')[0]?.startTime ?? null",
  )) as number | null;
  page.off('response', onResponse);
  const bodies = await Promise.all(scripts);
  const firstLoad = {
    scripts: bodies.length,
    js_bytes: bodies.reduce((n, b) => n + b.length, 0),
    js_gzip_bytes: bodies.reduce((n, b) => n + gzipSync(b).length, 0),
    interactive_ms: interactiveMs,
  };
  writeFileSync(path.join(dir, 'first-load.json'), JSON.stringify(firstLoad, null, 2));
  return { response, firstLoad };
}
