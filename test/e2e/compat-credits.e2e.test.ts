import { startFakeAnthropicUpstream, startFakeOpenAIUpstream, type FakeUpstream } from '@whetstone/testing';
import { ANTHROPIC_MODEL, grantCredits, OPENAI_MODEL, upstreamEnv } from './compat-helpers';
import { signUpWithKey, startSystem, type RunningSystem } from './system';

/**
 * Upstream models need a paid balance, end to end through real key-billing: a
 * team on the free plan (its one-time allowance, nothing granted) gets 402
 * `direct_model_requires_credits` in each compatible surface's envelope, and
 * the upstream is never called; built-in models still answer from the
 * allowance; once the operator grants credits with the admin CLI, the same
 * upstream calls succeed.
 */
describe('credits for upstream models through the compatible surfaces, end to end', () => {
  let system: RunningSystem;
  let fakeOpenAI: FakeUpstream;
  let fakeAnthropic: FakeUpstream;

  beforeAll(async () => {
    fakeOpenAI = await startFakeOpenAIUpstream();
    fakeAnthropic = await startFakeAnthropicUpstream();
    system = await startSystem({ env: upstreamEnv(fakeOpenAI, fakeAnthropic) });
  }, 300_000);

  afterAll(async () => {
    await system?.stop();
    await fakeOpenAI?.close();
    await fakeAnthropic?.close();
  }, 60_000);

  const chat = (key: string, body: Record<string, unknown>) =>
    fetch(`${system.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
  const messages = (key: string, body: Record<string, unknown>) =>
    fetch(`${system.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(body),
    });
  const user = (content: string) => [{ role: 'user', content }];

  it('when a free team without granted credits calls an upstream model, then 402 in each envelope until the operator grants credits', async () => {
    const { key, teamId } = await signUpWithKey(system.baseUrl, 'free-upstream');
    const openaiBefore = fakeOpenAI.requests.length;
    const anthropicBefore = fakeAnthropic.requests.length;

    const denied = await chat(key, { model: OPENAI_MODEL, messages: user('hello there') });
    expect(denied.status).toBe(402);
    expect(denied.headers.get('x-should-retry')).toBe('false');
    expect(await denied.json()).toEqual({
      error: {
        code: 'direct_model_requires_credits',
        type: 'insufficient_quota',
        param: null,
        message: expect.stringMatching(/credits/),
        resolution_url: expect.stringContaining('/dashboard'),
      },
    });
    const streamed = await chat(key, { model: OPENAI_MODEL, messages: user('hello there'), stream: true });
    expect(streamed.status).toBe(402);
    expect(((await streamed.json()) as { error: { code: string } }).error.code).toBe('direct_model_requires_credits');

    const deniedMessages = await messages(key, { model: ANTHROPIC_MODEL, max_tokens: 16, messages: user('good day') });
    expect(deniedMessages.status).toBe(402);
    expect(deniedMessages.headers.get('x-should-retry')).toBe('false');
    // The billing fields the other envelopes carry ride inside Messages' `error`.
    expect(await deniedMessages.json()).toEqual({
      type: 'error',
      error: {
        type: 'billing_error',
        message: expect.stringMatching(/credits/),
        code: 'direct_model_requires_credits',
        resolution_url: expect.stringContaining('/dashboard'),
      },
    });
    // An OpenAI-surface call keeps its envelope even when it carries Anthropic's version header.
    const withHeader = await fetch(`${system.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${key}`,
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify({ model: OPENAI_MODEL, messages: user('hello there') }),
    });
    expect(withHeader.status).toBe(402);
    expect(await withHeader.json()).toMatchObject({
      error: { code: 'direct_model_requires_credits', type: 'insufficient_quota', param: null },
    });
    expect(fakeOpenAI.requests.length).toBe(openaiBefore);
    expect(fakeAnthropic.requests.length).toBe(anthropicBefore);

    const builtIn = await chat(key, {
      model: 'whetstone-extract-base',
      messages: user('Ada Lovelace met Charles Babbage in London.'),
      schema: { entities: ['person', 'city'] },
    });
    expect(builtIn.status).toBe(200);
    const extracted = (await builtIn.json()) as { choices: { message: { content: string } }[] };
    const result = JSON.parse(extracted.choices[0]!.message.content) as { entities: Record<string, string[]> };
    expect(result.entities.person).toEqual(expect.arrayContaining(['Ada Lovelace', 'Charles Babbage']));

    await grantCredits(system.baseUrl, teamId, 10);
    const granted = await chat(key, { model: OPENAI_MODEL, messages: user('hello there') });
    expect(granted.status).toBe(200);
    expect(await granted.json()).toMatchObject({
      choices: [{ message: { content: 'Echo: HELLO THERE' }, finish_reason: 'stop' }],
    });
    const grantedMessages = await messages(key, { model: ANTHROPIC_MODEL, max_tokens: 16, messages: user('good day') });
    expect(grantedMessages.status).toBe(200);
    expect(await grantedMessages.json()).toMatchObject({ content: [{ type: 'text', text: 'Echo: GOOD DAY' }] });
    expect(fakeOpenAI.requests.length).toBe(openaiBefore + 1);
    expect(fakeAnthropic.requests.length).toBe(anthropicBefore + 1);
  }, 180_000);
});
