import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { datasetFile, startFakeOpenAIUpstream, type FakeUpstream } from '@whetstone/testing';
import { startSystem, type RunningSystem } from './system';
import { grantCredits, openAiBatchOf } from './compat-helpers';
import {
  chatUpstreamEnv,
  CHROMIUM,
  firstLoadOf,
  launchChromium,
  overviewOf,
  postJson,
  seedCorrections,
  seriousViolations,
} from './dashboard-helpers';

// Git-ignored; a reviewer opens the PNGs to see every page as the journey left it.
const SHOTS = path.join(__dirname, 'test-output', 'dashboard');
const CHAT_MODEL = 'e2e-dash-gpt';

// .ci/run installs Debian's Chromium; without it this journey cannot run at all, so it says so by name.
const describeWithBrowser = existsSync(CHROMIUM) ? describe : describe.skip;

/** Small enough to train in seconds on a shared 2-core machine: 80 wikigold sentences, one epoch. */
const smallDataset = () =>
  readFileSync(datasetFile('wikigold/train.jsonl'), 'utf8').split('\n').filter(Boolean).slice(0, 80).join('\n');

/**
 * Issue 17's browser journey, in real Chromium against the whole system as `pnpm start` runs it:
 * sign up → key → upload → a small training job with live logs → deploy → playground inference →
 * mark it incorrect with a correction → see it in the explorer; then every other page. Each page passes
 * axe-core with no serious or critical violation, runs under the strict CSP without a violation, and
 * leaves a screenshot.
 */
describeWithBrowser('the dashboard in Chromium, end to end through pnpm start', () => {
  let system: RunningSystem;
  let upstream: FakeUpstream;
  let browser: Browser;
  let page: Page;
  let base: string;
  const problems: string[] = [];
  let shot = 0;

  /** axe-core on the page as it is now, then a screenshot named after it. */
  const check = async (name: string) => {
    const violations = await seriousViolations(page);
    expect({ page: name, violations }).toEqual({ page: name, violations: [] });
    await page.screenshot({
      path: path.join(SHOTS, `${String(++shot).padStart(2, '0')}-${name}.png`),
      fullPage: true,
      caret: 'initial',
    });
  };
  const nav = (label: string) => page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: label });
  const formStatus = (form: string) => page.locator(`${form} .form-status`);

  beforeAll(async () => {
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    upstream = await startFakeOpenAIUpstream();
    system = await startSystem({ env: chatUpstreamEnv(upstream, CHAT_MODEL) });
    base = system.baseUrl;
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    page.on('dialog', (dialog) => void dialog.accept());
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      if (/Content Security Policy|Refused to/i.test(msg.text())) problems.push(`CSP: ${msg.text()}`);
    });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await system?.stop();
    await upstream?.close();
  }, 60_000);

  let jobId = '';
  let projectId = '';
  let inferenceId = '';
  let apiKey = '';
  const email = `dash-${Date.now()}@example.com`;

  it('when a visitor signs up, then forms give feedback, sign-up shows a busy state and lands on the overview, and Log out appears only once logged in', async () => {
    const { response, firstLoad } = await firstLoadOf(page, `${base}/dashboard`, '#signup-form', SHOTS);
    expect(page.url()).toMatch(/\/dashboard\/login$/);
    expect(response!.headers()['content-security-policy']).toMatch(/script-src 'self'(;|$)/);
    expect(await page.getByRole('button', { name: 'Log out' }).count()).toBe(0);
    expect(firstLoad.js_gzip_bytes).toBeLessThan(300 * 1024);
    expect(firstLoad.interactive_ms).not.toBeNull();
    await check('login');

    await page.locator('#login-form input[name=email]').fill('nobody@example.com');
    await page.locator('#login-form input[name=password]').fill('wrong password!');
    await page.locator('#login-form button[type=submit]').click();
    await page.locator('#login-form .form-status.error').waitFor();
    expect((await formStatus('#login-form').textContent())!.length).toBeGreaterThan(5);

    // The busy state is recorded as it happens: sign-up takes a while (scrypt), and must say so.
    await page.evaluate(`{
      const button = document.querySelector('#signup-form button[type=submit]');
      new MutationObserver(() => {
        if (button.disabled) document.body.dataset.sawBusy = button.textContent;
      }).observe(button, { attributes: true, childList: true, characterData: true, subtree: true });
    }`);
    await page.locator('#signup-form input[name=email]').fill(email);
    await page.locator('#signup-form input[name=password]').fill('correct horse battery');
    await page.locator('#signup-form button[type=submit]').click();
    await page.waitForURL(/\/dashboard$/);
    expect(await page.evaluate('document.body.dataset.sawBusy')).toBe('Creating your account…');
    await page.getByRole('button', { name: 'Log out' }).waitFor();
    await page.locator('#flash.ok').waitFor();
    // A new account lands on the overview: the allowance, no keys yet, and the first steps to take.
    expect(await overviewOf(page)).toMatchObject({
      current: 'page',
      stats: { 'Balance (credits)': '500', 'API keys': '0', 'Training jobs': '0' },
      steps: ['Create an API key', 'Upload a dataset', 'Train a model', 'Deploy it behind a project'],
      done: 0,
      latest: 'No inferences yet.',
    });
    await check('home');
  });

  it('when the user creates an API key, then the secret is shown once and listed by its last digits', async () => {
    await page.locator('#next-steps').getByRole('link', { name: 'Create an API key' }).click();
    await page.locator('#create-key-form input[name=name]').fill('dashboard journey');
    await page.locator('#create-key-form button[type=submit]').click();
    await page.locator('#new-key-value').waitFor();
    apiKey = (await page.locator('#new-key-value').textContent())!;
    expect(apiKey).toMatch(/^wst_sk_/);
    await page.locator('#keys-list tbody tr', { hasText: `…${apiKey.slice(-4)}` }).waitFor();
    expect(await page.locator('#keys-list').textContent()).not.toContain(apiKey);
    await check('keys');
  });

  it('when a file is uploaded, then a progress bar fills, the status follows live to ready, and the report lists the rows', async () => {
    await nav('Datasets').click();
    await page.locator('#upload-form').waitFor();
    await page.locator('#upload-form input[name=dataset_name]').fill('journey-ner');
    await page.locator('#upload-form select[name=dataset_type]').selectOption('extraction');
    await page.locator('#upload-form select[name=format]').selectOption('jsonl');
    await page
      .locator('#upload-form input[name=file]')
      .setInputFiles({ name: 'train.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from(smallDataset()) });
    await page.locator('#upload-form button[type=submit]').click();
    await page.locator('#upload-state', { hasText: 'ready' }).waitFor({ timeout: 60_000 });
    expect(await page.locator('#upload-progress').getAttribute('value')).toBe('100');
    await check('datasets');

    await page.getByRole('link', { name: 'journey-ner' }).click();
    await page.locator('#report dl').waitFor();
    expect(await page.locator('#report').textContent()).toContain('80');
    await check('dataset');

    // Synthetic data, generated from the page with its progress.
    await nav('Datasets').click();
    await page.locator('#generate-form input[name=dataset_name]').fill('journey-synth');
    await page.locator('#generate-form input[name=entities]').fill('person, city');
    await page.locator('#generate-form input[name=count]').fill('10');
    await page.locator('#generate-form button[type=submit]').click();
    await page.locator('#generate-state', { hasText: 'Generation ready: 10/10' }).waitFor({ timeout: 60_000 });
    await page.getByRole('link', { name: 'journey-synth' }).waitFor();

    // A file with broken rows: the report names each failing line; then the dataset is deleted.
    const broken = [
      ...smallDataset().split('\n').slice(0, 12),
      '{"text": "not closed"',
      '{"entities": []}',
      '{"text": "Short", "entities": [{"start": 0, "end": 99, "label": "person"}]}',
    ].join('\n');
    await page.locator('#upload-form input[name=dataset_name]').fill('journey-broken');
    await page
      .locator('#upload-form input[name=file]')
      .setInputFiles({ name: 'broken.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from(broken) });
    await page.locator('#upload-form button[type=submit]').click();
    await page.locator('#upload-state', { hasText: /Version 1: (ready|failed)/ }).waitFor({ timeout: 60_000 });
    await page.getByRole('link', { name: 'journey-broken' }).click();
    await page.locator('#report table').waitFor();
    const lines = await page.locator('#report tbody tr td:first-child').allTextContents();
    expect(lines).toEqual(expect.arrayContaining(['13', '14', '15']));
    await check('dataset-failing-rows');
    await page.getByRole('button', { name: 'Delete dataset' }).click();
    await page.waitForURL(/\/dashboard\/datasets$/);
    await page.locator('#flash.ok', { hasText: 'deleted' }).waitFor();
    expect(await page.getByRole('link', { name: 'journey-broken' }).count()).toBe(0);
  }, 180_000);

  it('when a small job is trained from the form, then its page streams the logs live, charts the loss and shows the metrics', async () => {
    await nav('Training').click();
    await page.locator('#create-job-form').waitFor();
    await page.locator('#create-job-form select[name=base_model]').selectOption('whetstone-extract-base');
    expect(await page.locator('#create-job-form input[name=nr_epochs]').getAttribute('max')).toBe('50');
    await page.locator('#create-job-form input[name=nr_epochs]').fill('1');
    await page.locator('#create-job-form input[name=dataset][value=journey-ner]').check();
    expect(await page.locator('#create-job-form input[name=dataset]:checked').count()).toBe(1);
    await check('training');
    await page.locator('#create-job-form button[type=submit]').click();
    await page.waitForURL(/\/dashboard\/training\/[0-9a-f-]{36}$/);
    jobId = page.url().split('/').pop()!;

    await page.locator('#job-logs', { hasText: /step \d+\/\d+ epoch 1 loss/ }).waitFor({ timeout: 120_000 });
    await page.locator('#log-state', { hasText: 'The job ended: complete' }).waitFor({ timeout: 120_000 });
    expect(await page.locator('#loss-chart figcaption').textContent()).toMatch(/latest loss [\d.]+, F1 [\d.]+/);
    await page.locator('#job-metrics table').waitFor();
    expect(await page.locator('#job-metrics').textContent()).toMatch(/person|location/);
    await page.locator('#checkpoints table').waitFor();

    // A checkpoint downloads through its presigned URL, and an evaluation reports its figures.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page
        .getByRole('button', { name: /^Download checkpoint weights\// })
        .first()
        .click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/\S/);
    expect(await download.failure()).toBeNull();
    await page.locator('#evaluate-form select[name=dataset_name]').selectOption('journey-ner');
    await page.locator('#evaluate-form button[type=submit]').click();
    await page
      .locator('#evaluate-form .form-status.ok', { hasText: 'Evaluated on journey-ner.' })
      .waitFor({ timeout: 60_000 });
    expect(await page.locator('#evaluation').textContent()).toMatch(/F1/);
    await check('job');

    await nav('Training').click();
    await page.locator('#job-filter select[name=status]').selectOption('complete');
    await page.locator('#job-filter button[type=submit]').click();
    await page.waitForURL(/status=complete/);
    await page.locator(`#jobs-list a[href="/dashboard/training/${jobId}"]`).waitFor();
    await check('training-list');
  }, 300_000);

  it('when the job is deployed to a new project, then its history shows it active and the playground answers', async () => {
    await nav('Projects').click();
    await page.locator('#create-project-form input[name=name]').fill('journey');
    await page.locator('#create-project-form button[type=submit]').click();
    await page.waitForURL(/\/dashboard\/projects\/[^/]+$/);
    projectId = page.url().split('/').pop()!;
    await page.locator('#deploy-form select[name=training_job_id]').selectOption(jobId);
    await page.locator('#deploy-form button[type=submit]').click();
    await page.locator('#deployments .badge-active').waitFor({ timeout: 60_000 });

    // Every inference of the project is judged, so the record page can show a score and its rationale.
    await page.locator('#judge-form input[name=enabled]').check();
    await page.locator('#judge-form input[name=sample_rate]').fill('1');
    await page.locator('#judge-form button[type=submit]').click();
    await page.locator('#judge-form .form-status.ok', { hasText: 'Judge settings saved.' }).waitFor();

    await page.locator('#playground-form textarea[name=text]').fill('Zorblax Quint moved to Brindlemoor last May.');
    await page.locator('#playground-form input[name=entities]').fill('person, location, organization, misc');
    await page.locator('#playground-form button[type=submit]').click();
    await page.locator('#playground-record').waitFor({ timeout: 60_000 });
    await check('project');
  }, 180_000);

  it('when the user marks the answer incorrect and corrects a span, then the feedback is stored as corrected', async () => {
    await page.locator('#playground-record').click();
    await page.waitForURL(/\/dashboard\/inferences\/[0-9a-f-]{36}$/);
    inferenceId = page.url().split('/').pop()!;
    await page.locator('#judge .rationale').waitFor({ timeout: 60_000 });
    expect(await page.locator('#judge').textContent()).toMatch(/scored/);
    await page.getByLabel('Incorrect').check();
    await page.locator('#correction-editor').waitFor();
    await page.locator('#correction-editor button.token', { hasText: /^Brindlemoor$/ }).click();
    await page.locator('#correction-editor select[name=editor_label]').selectOption('location');
    await page.locator('#mark-entity').click();
    await page.locator('#correction-editor button.token', { hasText: /^Zorblax$/ }).click();
    await page.locator('#correction-editor button.token', { hasText: /^Quint$/ }).click();
    await page.locator('#correction-editor select[name=editor_label]').selectOption('person');
    await page.locator('#mark-entity').click();
    await check('inference');
    await page.locator('#feedback-form button[type=submit]').click();
    await page.locator('#feedback-form .form-status.ok', { hasText: 'incorrect' }).waitFor();

    const stored = (await (
      await fetch(`${base}/inferences/${inferenceId}/feedback`, { headers: { 'x-api-key': apiKey } })
    ).json()) as { human_verdict: string; corrected_output: { entities: Record<string, { text: string }[]> } };
    expect(stored.human_verdict).toBe('incorrect');
    expect(stored.corrected_output.entities.location!.map((m) => m.text)).toContain('Brindlemoor');
    expect(stored.corrected_output.entities.person!.map((m) => m.text)).toContain('Zorblax Quint');
  }, 120_000);

  it('when the explorer is filtered by the project, then it lists that inference with its incorrect verdict', async () => {
    await nav('Inferences').click();
    await page.locator('#inference-filters input[name=project_id]').fill(projectId);
    await page.locator('#inference-filters button[type=submit]').click();
    await page.waitForURL(/project_id=/);
    const row = page.locator('tbody tr', { has: page.locator(`a[href="/dashboard/inferences/${inferenceId}"]`) });
    await row.waitFor();
    expect(await row.locator('.badge-incorrect').count()).toBe(1);
    expect(await page.locator('#inference-count').textContent()).toMatch(/^1 match/);
    await check('inferences');
  });

  it('when credits open, then they chart usage and link the ledger lines to the job and the inference', async () => {
    await nav('Credits & usage').click();
    await page.locator('#usage-chart canvas').waitFor();
    await page.locator(`#app a[href="/dashboard/training/${jobId}"]`).first().waitFor();
    await page.locator(`#app a[href="/dashboard/inferences/${inferenceId}"]`).first().waitFor();
    await check('credits');
  });

  it('when the overview opens after the journey, then every first step is done and it lists the latest inference', async () => {
    await nav('Overview').click();
    await page.locator(`#latest a[href="/dashboard/inferences/${inferenceId}"]`).waitFor();
    expect(await overviewOf(page)).toMatchObject({ stats: { 'API keys': '1', 'Training jobs': '1' }, done: 4 });
    await check('home-after');
  });

  it('when the user adapts the project from the loop page, then the audit trail shows the gate promoting or rejecting the candidate', async () => {
    // Ten more corrections through the API (the journey made one in the page).
    await seedCorrections(base, apiKey, projectId);

    await page.goto(`${base}/dashboard/projects/${projectId}/adaptive`);
    await page.locator('#adaptive-form').waitFor();
    await page.locator('#adaptive-form input[name=min_corrections]').fill('5');
    await page.locator('#adaptive-form select[name=metric]').selectOption('f1');
    await page.locator('#adaptive-form button[type=submit]').click();
    await page.locator('#adaptive-form .form-status.ok', { hasText: 'Settings saved.' }).waitFor();
    await page.locator('#adapt-now').click();
    await page.locator('#adaptations tbody tr').first().waitFor();
    await page
      .locator('#adaptations .badge-promoted, #adaptations .badge-rejected')
      .first()
      .waitFor({ timeout: 150_000 });
    expect(await page.locator('#adaptations .decision').first().textContent()).toMatch(/^(promoted|rejected): f1 /);
    await page.locator('#adaptations details table').first().waitFor();
    await check('adaptive');
  }, 240_000);

  it('when the user chats with an upstream model, then the reply streams into the thread', async () => {
    const me = (await page.evaluate(() => fetch('/auth/me').then((r) => r.json()))) as { team: { id: string } };
    await grantCredits(base, me.team.id, 100);
    await nav('Chat').click();
    await page.locator('#chat-form').waitFor();
    await page.locator('#chat-form select[name=model]').selectOption(CHAT_MODEL);
    await page.locator('#chat-form input[name=api_key]').fill(apiKey);
    await page.locator('#chat-form textarea[name=message]').fill('hello from the dashboard');
    await page.locator('#chat-form button[type=submit]').click();
    await page.locator('#chat-usage', { hasText: 'completion tokens' }).waitFor({ timeout: 30_000 });
    // The fake upstream echoes the last message in capitals.
    expect(await page.locator('#chat-thread .assistant').textContent()).toContain('HELLO FROM THE DASHBOARD');
    await check('chat');

    // A stored conversation with a tool call reads back turn by turn on its inference page.
    const call = { id: 'call_9', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } };
    const messages = [
      { role: 'user', content: 'look it up' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_9', content: 'found' },
    ];
    const body = { model: CHAT_MODEL, messages, store: true, metadata: { ticket: 'T-1' } };
    const stored = await postJson<{ x_service: { inference_id: string } }>(base, '/v1/chat/completions', apiKey, body);
    await page.goto(`${base}/dashboard/inferences/${stored.x_service.inference_id}`);
    await page.locator('#conversation .msg.tool').waitFor();
    expect(await page.locator('#conversation').textContent()).toContain('lookup({"q":"x"}) call_9');
    expect(await page.locator('#conversation .msg.tool').textContent()).toContain('answers call_9');
    await check('inference-conversation');
    expect(await page.locator('#metadata').textContent()).toContain('T-1');
    await page.locator('#delete-inference').click();
    await page.waitForURL(/\/dashboard\/inferences$/);
    const id = stored.x_service.inference_id;
    expect((await fetch(`${base}/inferences/${id}`, { headers: { 'x-api-key': apiKey } })).status).toBe(404);

    // A message batch made with the key is listed with its counts, and offers its results once it has ended.
    const params = { model: CHAT_MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'batched' }] };
    const requests = [{ custom_id: 'a', params }];
    const batch = await postJson<{ id: string }>(base, '/v1/messages/batches', apiKey, { requests });
    await nav('Batches').click();
    await page.locator('#batch-list', { hasText: batch.id }).waitFor();
    await page.locator('#batch-list', { hasText: '1 succeeded' }).locator('a').waitFor({ timeout: 30_000 });
    // So is an OpenAI batch, with its output file once it has ended, and the file it was made from.
    const openAi = await openAiBatchOf(base, apiKey, CHAT_MODEL);
    const output = page.locator('#openai-batch-list', { hasText: openAi.batchId }).getByText('Output');
    await output.waitFor({ timeout: 30_000 });
    await page.locator('#file-list', { hasText: openAi.fileId }).waitFor();
    await check('batches');
  });

  it('when the user logs out, then the nav offers log in and no Log out, and no page broke the CSP or threw', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(/\/dashboard\/login$/);
    await nav('Log in or sign up').waitFor();
    expect(await page.getByRole('button', { name: 'Log out' }).count()).toBe(0);

    // A deep link while logged out goes through log in and lands where it pointed.
    await page.goto(`${base}/dashboard/inferences?project_id=${projectId}`);
    await page.waitForURL(/\/dashboard\/login$/);
    await page.locator('#login-form input[name=email]').fill(email);
    await page.locator('#login-form input[name=password]').fill('correct horse battery');
    await page.locator('#login-form button[type=submit]').click();
    await page.waitForURL(/\/dashboard\/inferences\?project_id=/);
    await page.locator(`a[href="/dashboard/inferences/${inferenceId}"]`).waitFor();
    expect(problems).toEqual([]);
  });
});
