import { BUILTIN_MODELS, upstreamEntry, type CatalogEntry } from './catalog';
import { exclusionOf, rank, ratesOf, routePlan, savingsOf, type RequestNeeds } from './routing';

const provider = { name: 'p', kind: 'openai' as const, host: 'p.test', models: [] };
/** An upstream decoder priced in micro-credits per 1,000 tokens. */
const upstream = (id: string, input: bigint, output: bigint): { id: string; entry: CatalogEntry } => ({
  id,
  entry: upstreamEntry(provider, {
    id,
    upstreamModel: id,
    family: 'gpt-4',
    minCacheableTokens: 0,
    defaultMaxTokens: 64,
    price: { perRequest: 0n, per1kInput: input, per1kOutput: output },
  }),
});
const builtin = (id: string) => ({ id, entry: BUILTIN_MODELS.find((m) => m.id === id)! });

const chatNeeds: RequestNeeds = { promptTokens: 10, tools: false, schema: false };
const noRules = { maxPromptTokens: 0 };

describe('routing policy', () => {
  const big = upstream('big', 3_000n, 15_000n);
  const mid = upstream('mid', 1_000n, 5_000n);
  const small = upstream('small', 500n, 2_000n);
  const sameAsSmall = upstream('same-as-small', 2_000n, 500n);

  it('when candidates have different rates, then they rank cheapest first by input plus output, ties in the given order', () => {
    expect(rank([big, sameAsSmall, mid, small]).map((c) => c.id)).toEqual(['same-as-small', 'small', 'mid', 'big']);
    expect(rank([small, sameAsSmall]).map((c) => c.id)).toEqual(['small', 'same-as-small']);
  });

  it('when the cheapest candidate may take the request, then it is tried first and the reference is the fallback', () => {
    expect(routePlan([mid, small], big, chatNeeds, noRules).map((c) => c.id)).toEqual(['small', 'big']);
  });

  it('when the request has tools, then built-in decoders are passed over for an upstream candidate', () => {
    const decoder = builtin('whetstone-decoder-base');
    const plan = routePlan([decoder, mid], big, { ...chatNeeds, tools: true }, noRules);
    expect(plan.map((c) => c.id)).toEqual(['mid', 'big']);
    expect(exclusionOf(decoder.entry, { ...chatNeeds, tools: true }, noRules)).toBe(
      'the request has tools: upstream models only',
    );
  });

  it('when the request asks for JSON, then built-in decoders are passed over for an upstream candidate', () => {
    const decoder = builtin('whetstone-decoder-base');
    const needs = { ...chatNeeds, responseFormat: true };
    expect(routePlan([decoder, mid], big, needs, noRules).map((c) => c.id)).toEqual(['mid', 'big']);
    expect(exclusionOf(decoder.entry, needs, noRules)).toMatch(/response_format/);
  });

  it('when a candidate is an upstream embedding model, then no chat call is routed to it, however cheap', () => {
    const embedder = {
      id: 'embed',
      entry: upstreamEntry(provider, {
        id: 'embed',
        upstreamModel: 'embed',
        task: 'embedding',
        family: 'gpt-4',
        minCacheableTokens: 0,
        defaultMaxTokens: 0,
        price: { perRequest: 0n, per1kInput: 1n, per1kOutput: 0n },
      }),
    };
    expect(embedder.entry.task).toBe('embedding');
    expect(routePlan([embedder, mid], big, chatNeeds, noRules).map((c) => c.id)).toEqual(['mid', 'big']);
  });

  it("when the request has logit_bias, then it goes to the reference alone: token ids are its tokenizer's", () => {
    const needs = { ...chatNeeds, logitBias: true };
    expect(routePlan([mid], big, needs, noRules).map((c) => c.id)).toEqual(['big']);
    expect(exclusionOf(mid.entry, needs, noRules)).toMatch(/logit_bias/);
  });

  it('when the request has a schema, then only extraction candidates may take it, and they need one', () => {
    const extract = builtin('whetstone-extract-base');
    expect(routePlan([mid, extract], big, { ...chatNeeds, schema: true }, noRules).map((c) => c.id)).toEqual([
      'whetstone-extract-base',
      'big',
    ]);
    expect(exclusionOf(extract.entry, chatNeeds, noRules)).toBe('an extraction model needs a schema');
  });

  it('when the prompt is longer than max_prompt_tokens, then no candidate is picked and the reference alone answers', () => {
    const rules = { maxPromptTokens: 10 };
    expect(routePlan([small], big, { ...chatNeeds, promptTokens: 11 }, rules).map((c) => c.id)).toEqual(['big']);
    expect(routePlan([small], big, { ...chatNeeds, promptTokens: 10 }, rules).map((c) => c.id)).toEqual([
      'small',
      'big',
    ]);
  });

  it('when the routed model is below the reference, then savings are the rate differences per million tokens', () => {
    expect(ratesOf(big.entry.price)).toEqual({ inputPerMillion: 3, outputPerMillion: 15 });
    expect(savingsOf(small.entry.price, big.entry.price)).toEqual({ inputPerMillion: 2.5, outputPerMillion: 13 });
  });

  it('when the routed model is not below the reference on every rate, then there are no savings', () => {
    expect(savingsOf(big.entry.price, big.entry.price)).toBeUndefined();
    expect(savingsOf(sameAsSmall.entry.price, mid.entry.price)).toBeUndefined();
    expect(savingsOf(big.entry.price, small.entry.price)).toBeUndefined();
  });
});
