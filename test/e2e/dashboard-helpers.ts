import axe from 'axe-core';
import { chromium, type Browser, type Page } from 'playwright-core';

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
