import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import {
  fixtureDataset,
  startFakeAnthropicUpstream,
  startFakeOpenAIUpstream,
  type FakeUpstream,
} from '@whetstone/testing';
import { signUpWithKey, startSystem, type RunningSystem } from './system';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');

export const ADMIN_TOKEN = 'e2e-admin-token-compat-0123456789abcdef';
export const OPENAI_MODEL = 'e2e-gpt';
export const ANTHROPIC_MODEL = 'e2e-claude';
/** The fake OpenAI-compatible provider's embedding model, as the catalog names it (`e2e-embedder` at the provider). */
export const EMBEDDING_MODEL = 'e2e-embed';

/**
 * The router's provider config for two fake upstreams on loopback (see
 * services/inference-router/README.md): their keys ride in variables, never in the JSON.
 */
export function upstreamEnv(openai: FakeUpstream, anthropic: FakeUpstream): Record<string, string> {
  const price = { unit: '1m', input: 100, output: 400, cache_read: 10, cache_write: 125 };
  return {
    ADMIN_TOKEN,
    UPSTREAM_ALLOW_PRIVATE_HOSTS: '127.0.0.1',
    E2E_FAKE_OPENAI_KEY: openai.apiKey,
    E2E_FAKE_ANTHROPIC_KEY: anthropic.apiKey,
    CATALOG_UPSTREAMS: JSON.stringify([
      {
        name: 'fake-openai',
        kind: 'openai-compatible',
        base_url: openai.url,
        api_key_env: 'E2E_FAKE_OPENAI_KEY',
        models: [
          { id: OPENAI_MODEL, min_cacheable_tokens: 4, price },
          { id: EMBEDDING_MODEL, upstream_model: 'e2e-embedder', task: 'embedding', price: { unit: '1m', input: 2 } },
        ],
      },
      {
        name: 'fake-anthropic',
        kind: 'anthropic',
        base_url: anthropic.url,
        api_key_env: 'E2E_FAKE_ANTHROPIC_KEY',
        models: [{ id: ANTHROPIC_MODEL, min_cacheable_tokens: 4, price }],
      },
    ]),
  };
}

/** Upstream models need a paid or granted balance on the free plan: the operator grants some. */
export async function grantCredits(baseUrl: string, teamId: string, credits: number): Promise<void> {
  const kbAddr = `127.0.0.1:${Number(new URL(baseUrl).port) - 8080 + 50051}`;
  await run(
    'pnpm',
    ['--silent', 'whetstone', 'admin', 'grant-credits', '--team', teamId, '--credits', String(credits)],
    {
      cwd: ROOT,
      env: { ...process.env, KEY_BILLING_ADDR: kbAddr, ADMIN_TOKEN },
    },
  );
}

/** Raw SSE frames of a streamed call: `[event, data]` pairs in order. */
export async function frames(res: Response): Promise<[string | null, string][]> {
  return (await res.text())
    .split('\n\n')
    .filter(Boolean)
    .map((frame) => [/^event: (.*)$/m.exec(frame)?.[1] ?? null, /^data: (.*)$/m.exec(frame)?.[1] ?? '']);
}

/** A long system prompt (the fakes count one token per word), so a marker at its end has a cacheable prefix. */
export const LONG_SYSTEM = Array.from({ length: 64 }, (_, i) => `rule${i}`).join(' ');

/** The whole system with two fake upstreams as its providers, a team funded with credits, and its key. */
export interface UpstreamSystem {
  system: RunningSystem;
  fakeOpenAI: FakeUpstream;
  fakeAnthropic: FakeUpstream;
  key: string;
  teamId: string;
  /** The `openai` client on the team's key. */
  openai: OpenAI;
  stop(): Promise<void>;
}

/** Starts the system as `pnpm start` does, with the fakes' provider config (`env`, default `upstreamEnv`). */
export async function startWithUpstreams(
  team: string,
  env: (openai: FakeUpstream, anthropic: FakeUpstream) => Record<string, string> = upstreamEnv,
): Promise<UpstreamSystem> {
  const fakeOpenAI = await startFakeOpenAIUpstream();
  const fakeAnthropic = await startFakeAnthropicUpstream();
  const system = await startSystem({ env: env(fakeOpenAI, fakeAnthropic) });
  const { key, teamId } = await signUpWithKey(system.baseUrl, team);
  await grantCredits(system.baseUrl, teamId, 50);
  const openai = new OpenAI({ apiKey: key, baseURL: `${system.baseUrl}/v1`, maxRetries: 3 });
  const stop = async () => {
    await system.stop();
    await fakeOpenAI.close();
    await fakeAnthropic.close();
  };
  return { system, fakeOpenAI, fakeAnthropic, key, teamId, openai, stop };
}

/** An OpenAI batch of one chat completion over an uploaded input file, made with the team's key: the two ids. */
export async function openAiBatchOf(baseUrl: string, key: string, model: string) {
  const openai = new OpenAI({ apiKey: key, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
  const body = { model, messages: [{ role: 'user', content: 'Ada Lovelace' }] };
  const line = { custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body };
  const file = await openai.files.create({
    file: await OpenAI.toFile(Buffer.from(JSON.stringify(line)), 'batch.jsonl'),
    purpose: 'batch',
  });
  const batch = await openai.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
  return { fileId: file.id, batchId: batch.id };
}

/** A fine-tuning job made with the team's key and cancelled at once (its record and events stay readable): its id. */
export async function fineTuningJobOf(baseUrl: string, key: string): Promise<string> {
  const openai = new OpenAI({ apiKey: key, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
  const chat = readFileSync(fixtureDataset('chat/greetings.jsonl'));
  const file = await openai.files.create({ file: await OpenAI.toFile(chat, 'chat.jsonl'), purpose: 'fine-tune' });
  const job = await openai.fineTuning.jobs.create({ model: 'whetstone-decoder-base', training_file: file.id });
  await openai.fineTuning.jobs.cancel(job.id);
  return job.id;
}

/** A conversation of one user message made with the team's key: its id and its item's id. */
export async function conversationOf(baseUrl: string, key: string, text: string) {
  const openai = new OpenAI({ apiKey: key, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
  const conversation = await openai.conversations.create({ items: [{ role: 'user', content: text }] });
  const [item] = (await openai.conversations.items.list(conversation.id)).data;
  return { id: conversation.id, itemId: item!.id! };
}

/** A raw JSON POST on the team's key, for what the official clients would refuse to send or would hide. */
export const postAs =
  (running: () => UpstreamSystem) =>
  (path: string, body: unknown): Promise<Response> =>
    fetch(`${running().system.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': running().key },
      body: JSON.stringify(body),
    });
