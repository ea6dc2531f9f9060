import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { fakeChat, type FakeChat } from './fake-chat';
import { createKey, signUp, startGateway, startKeyBilling, type Gateway } from './harness';

/** Raw SSE frames of a streamed call: `[event, data]` pairs in order. */
export async function frames(res: Response): Promise<[string | null, string][]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((frame) => {
      const event = /^event: (.*)$/m.exec(frame)?.[1] ?? null;
      const data = /^data: (.*)$/m.exec(frame)?.[1] ?? '';
      return [event, data];
    });
}

/** The gateway and real key-billing in front of a scripted router Chat, a signed-up key and both official clients. */
export interface CompatHarness {
  kb: Awaited<ReturnType<typeof startKeyBilling>>;
  gw: Gateway;
  fake: FakeChat;
  key: string;
  openai: OpenAI;
  anthropic: Anthropic;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  close(): Promise<void>;
}

export async function startCompatHarness(): Promise<CompatHarness> {
  const kb = await startKeyBilling();
  const fake = fakeChat();
  const gw = await startGateway(kb, { inference: fake.port });
  const key = (await createKey(gw.url, await signUp(gw.url))).secret_key;
  return {
    kb,
    gw,
    fake,
    key,
    openai: new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 2 }),
    anthropic: new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 2 }),
    post: (path, body, headers = {}) =>
      fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      }),
    async close() {
      await gw.close();
      await kb.close();
    },
  };
}
