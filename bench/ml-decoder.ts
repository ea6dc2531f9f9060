/**
 * pnpm --filter @whetstone/bench bench:decoder
 * whetstone-decoder-base: LoRA fine-tuning on a chat set made from banking77
 * (user: the customer's message, assistant: its intent in words; train on
 * train, held-out loss on test), training examples/s, the trained-parameter
 * share, and streaming generation tokens/s, also with token log probabilities
 * and 5 alternatives asked for (OpenAI's `logprobs`), and prompt scoring
 * (completions' `echo` with `logprobs` and `max_tokens: 0`) in prompt bytes/s. Matmuls run as onnxruntime
 * sessions (1 thread); BENCH_MATMUL=js measures the pure TypeScript kernels.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { evaluateDecoderBundle, loadDecoder, trainDecoderLora } from '@whetstone/ml';
import { nn } from '@whetstone/ml/internals';
import { datasetsDir } from '@whetstone/testing';

const DATA = datasetsDir();
const TRAIN = Number(process.env.BENCH_DECODER_TRAIN ?? 600);
const HELDOUT = Number(process.env.BENCH_DECODER_HELDOUT ?? 150);

function chatRows(file: string, n: number) {
  const rows = readFileSync(path.join(DATA, file), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { text: string; label: string });
  const step = Math.max(1, Math.floor(rows.length / n));
  return rows
    .filter((_, i) => i % step === 0)
    .slice(0, n)
    .map((r) => ({
      messages: [
        { role: 'user' as const, content: r.text.slice(0, 80) },
        { role: 'assistant' as const, content: r.label.replace(/_/g, ' ') },
      ],
    }));
}

/** Tokens per second streaming replies to 8 held-out prompts, with or without log probabilities. */
async function tokensPerSecond(
  decoder: ReturnType<typeof loadDecoder>,
  heldout: ReturnType<typeof chatRows>,
  logprobs?: number,
) {
  let tokens = 0;
  const genStart = process.hrtime.bigint();
  for (let i = 0; i < 8; i++) {
    for await (const chunk of decoder.generate([{ role: 'user', content: heldout[i]!.messages[0]!.content }], {
      temperature: 0.8,
      top_p: 0.95,
      max_tokens: 48,
      seed: i,
      ...(logprobs === undefined ? {} : { logprobs }),
    }))
      tokens += Buffer.byteLength(chunk.text);
  }
  return tokens / (Number(process.hrtime.bigint() - genStart) / 1e9);
}

/**
 * Streaming generation speed, plain and with logprobs (5 alternatives), alternating 4 rounds each and taking the
 * medians; and greedy replies to the first 3 held-out prompts.
 */
async function generation(decoder: ReturnType<typeof loadDecoder>, heldout: ReturnType<typeof chatRows>) {
  const plain: number[] = [];
  const withLogprobs: number[] = [];
  // Which runs first alternates too, so neither gains from a warmer process.
  for (let round = 0; round < 4; round++) {
    const first = round % 2 === 0;
    if (first) plain.push(await tokensPerSecond(decoder, heldout));
    withLogprobs.push(await tokensPerSecond(decoder, heldout, 5));
    if (!first) plain.push(await tokensPerSecond(decoder, heldout));
  }
  const median = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return (sorted[1]! + sorted[2]!) / 2;
  };
  const sample = [];
  for (const row of heldout.slice(0, 3)) {
    let reply = '';
    for await (const c of decoder.generate([row.messages[0]!], { temperature: 0, max_tokens: 40 })) reply += c.text;
    sample.push({ user: row.messages[0]!.content, expected: row.messages[1]!.content, reply });
  }

  return { tokensPerSecond: median(plain), logprobsTokensPerSecond: median(withLogprobs), sample };
}

/**
 * Prompt bytes scored per second (echo with logprobs 5 and max_tokens 0) over the held-out prompts, 64 and 1,024
 * bytes long (the first cut from each prompt, the second the prompts joined), median of 5 rounds.
 */
async function scoring(decoder: ReturnType<typeof loadDecoder>, heldout: ReturnType<typeof chatRows>) {
  const joined = heldout.map((r) => r.messages[0]!.content).join(' ');
  const rate = async (prompt: string) => {
    const rounds: number[] = [];
    for (let round = 0; round < 5; round++) {
      const start = process.hrtime.bigint();
      for await (const _ of decoder.generate([{ role: 'user', content: prompt }], {
        max_tokens: 0,
        logprobs: 5,
        prompt_logprobs: true,
      }));
      rounds.push(Buffer.byteLength(prompt) / (Number(process.hrtime.bigint() - start) / 1e9));
    }
    return rounds.sort((a, b) => a - b)[2]!;
  };
  return { short: await rate(joined.slice(0, 64)), long: await rate(joined.slice(0, 1024)) };
}

async function main(): Promise<void> {
  const backend = nn.setMatmulBackend(process.env.BENCH_MATMUL === 'js' ? 'js' : 'ort');
  const train = chatRows('banking77/train.jsonl', TRAIN);
  const heldout = chatRows('banking77/test.jsonl', HELDOUT);
  let examplesPerSecond = 0;
  const epochEnds: { epoch: number; trainAccuracy: number; loss: number; tokenAccuracy: number }[] = [];
  const started = process.hrtime.bigint();
  const result = await trainDecoderLora({
    train,
    heldout,
    hyperparameters: { nrEpochs: 2, learningRate: 1e-2, batchSize: 16, loraRank: 8, seed: 1 },
    onProgress: (p) => {
      examplesPerSecond = p.examplesPerSecond;
      if (p.validation) epochEnds.push({ epoch: p.epoch, trainAccuracy: p.tokenAccuracy ?? NaN, ...p.validation });
      if (p.step % 20 === 0 || p.step === p.totalSteps)
        process.stderr.write(
          `step ${p.step}/${p.totalSteps} loss ${p.loss.toFixed(3)} ${p.examplesPerSecond.toFixed(0)} ex/s\n`,
        );
    },
  });
  const trainSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  const { lora } = result.manifest;
  // What each epoch's held-out pass costs: evaluation scores the adapter and the base, two such passes.
  const evalStart = process.hrtime.bigint();
  evaluateDecoderBundle(result.bundle, heldout);
  const heldoutPassSeconds = Number(process.hrtime.bigint() - evalStart) / 1e9 / 2;

  const served = loadDecoder(result.bundle);
  const { tokensPerSecond, logprobsTokensPerSecond, sample } = await generation(served, heldout);
  const scored = await scoring(served, heldout);

  const fmt = (x: number, d = 3) => x.toFixed(d);
  console.log(
    'whetstone-decoder-base LoRA on banking77-as-chat (train %d, held-out %d), matmul backend %s',
    train.length,
    heldout.length,
    backend,
  );
  console.log(`held-out loss (nats/byte)   base ${fmt(result.metrics.base_loss)}  LoRA ${fmt(result.metrics.loss)}`);
  console.log(
    `held-out perplexity         base ${fmt(result.metrics.base_perplexity, 2)}  LoRA ${fmt(result.metrics.perplexity, 2)}`,
  );
  console.log(
    `held-out token accuracy     base ${fmt(result.metrics.base_token_accuracy)}  LoRA ${fmt(result.metrics.token_accuracy)}`,
  );
  for (const e of epochEnds)
    console.log(
      `  end of epoch ${e.epoch}             held-out loss ${fmt(e.loss)}, token accuracy ${fmt(e.tokenAccuracy)} (the step's batch: ${fmt(e.trainAccuracy)})`,
    );
  console.log(
    `held-out pass               ${fmt(heldoutPassSeconds, 2)} s (one per epoch during training, ${((100 * heldoutPassSeconds * epochEnds.length) / trainSeconds).toFixed(1)}% of the run)`,
  );
  console.log(
    `trained parameters          ${lora.trainedParameters} of ${lora.baseParameters} (${fmt((100 * lora.trainedParameters) / lora.baseParameters, 1)}%), rank ${lora.rank}, adapter ${(result.bundle.length / 1024).toFixed(0)} KiB`,
  );
  console.log(
    `training                    ${fmt(examplesPerSecond, 1)} examples/s, ${fmt(trainSeconds, 1)} s total (2 epochs, incl. evaluation)`,
  );
  console.log(
    `generation                  ${fmt(tokensPerSecond, 0)} tokens/s (byte tokens, streaming, merged adapter; median of 4 rounds)`,
  );
  console.log(
    `  with logprobs, 5 top      ${fmt(logprobsTokensPerSecond, 0)} tokens/s (${fmt((100 * logprobsTokensPerSecond) / tokensPerSecond - 100, 1)}% against plain, rounds alternating)`,
  );
  console.log(
    `prompt scoring (echo)       ${fmt(scored.short, 0)} prompt bytes/s at 64 bytes, ${fmt(scored.long, 0)} at 1,024 (logprobs 5, max_tokens 0; median of 5)`,
  );
  for (const s of sample)
    console.log(
      `  user: ${JSON.stringify(s.user)}\n    expected: ${JSON.stringify(s.expected)}  greedy: ${JSON.stringify(s.reply)}`,
    );
}

void main();
