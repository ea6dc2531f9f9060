/**
 * The fake OpenAI-compatible upstream of bench:chat in a process of its own, so that it neither shares the load
 * generator's event loop nor hides in its CPU figure. It answers at once (no artificial delay) and prints one JSON
 * line, `{url, apiKey}`, when it listens; it ends with its parent (stdin closes).
 */
import { startFakeOpenAIUpstream } from '@whetstone/testing';

async function main(): Promise<void> {
  const fake = await startFakeOpenAIUpstream();
  // The record of every request is for tests; a benchmark's tens of thousands would only grow the heap.
  setInterval(() => fake.requests.splice(0, fake.requests.length), 1000).unref();
  process.stdout.write(`${JSON.stringify({ url: fake.url, apiKey: fake.apiKey })}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => void fake.close().then(() => process.exit(0)));
}

void main();
