/** The public API as the benchmarks drive it: JSON with an API key, and the wikigold upload they all start from. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { datasetsDir } from '@whetstone/testing';

export type Api = ReturnType<typeof apiOf>;

export function apiOf(base: string, key: string) {
  const headers = { 'content-type': 'application/json', 'x-api-key': key };
  const post = async (p: string, body: unknown) =>
    (await fetch(`${base}${p}`, { method: 'POST', headers, body: JSON.stringify(body) })).json() as Promise<
      Record<string, unknown>
    >;
  const get = async (p: string) => (await fetch(`${base}${p}`, { headers })).json() as Promise<Record<string, unknown>>;
  return { base, headers, post, get };
}

/** Uploads the wikigold train split (datasets/) as dataset `wikigold` and waits until version 1 is ready. */
export async function uploadWikigold(api: Api): Promise<void> {
  const url = (
    await api.post('/core/datasets/upload/url', {
      dataset_name: 'wikigold',
      dataset_type: 'extraction',
      format: 'jsonl',
      filename: 'train.jsonl',
    })
  ).upload_url as string;
  await fetch(url, { method: 'PUT', body: readFileSync(path.join(datasetsDir(), 'wikigold/train.jsonl')) });
  await api.post('/core/datasets/upload/process', { dataset_name: 'wikigold' });
  while ((await api.get('/core/datasets/wikigold/1')).status !== 'ready') await new Promise((r) => setTimeout(r, 100));
}
