/**
 * Router projects: the routing policy, as pure rules. A router has candidate
 * models, a reference model and rules. A call is offered to the candidates
 * cheapest first (input plus output rate per token; equal rates keep the order
 * the team gave); the first one the request's needs and the rules allow is
 * picked, and the reference answers when none is, or when the pick fails before
 * its first piece. Deterministic: the same request and router always pick the same model.
 */
import type { CatalogEntry, Price } from './catalog';

/** A project's router as stored. */
export interface ProjectRouterRow {
  projectId: string;
  teamId: string;
  /** Catalog model ids in the order the team gave them. */
  candidates: string[];
  referenceModel: string;
  /** Longest prompt, in estimated tokens, a candidate may take; 0 means no limit. */
  maxPromptTokens: number;
  updatedAt: Date;
}

/** Most candidates a router holds. */
export const MAX_ROUTER_CANDIDATES = 10;

/** What the policy reads of a request. */
export interface RequestNeeds {
  /** Estimated prompt tokens (4 characters each). */
  promptTokens: number;
  /** The request offers tools: only upstream models can call them. */
  tools: boolean;
  /** The request carries a schema: only extraction models read one, and they need it. */
  schema: boolean;
  /** The request asks for a JSON reply (response_format): the built-in decoders cannot give one. */
  responseFormat?: boolean;
  /** The request biases token ids, which are the reference model's tokenizer's: only the reference takes it. */
  logitBias?: boolean;
  /** The request asks for the prompt's log probabilities (echo with logprobs): only built-in decoders give them. */
  promptLogprobs?: boolean;
}

/** A model the policy can pick: its id and the catalog entry that prices it and says its task. */
export interface Routable {
  id: string;
  entry: CatalogEntry;
}

/** Rates in credits per million tokens (micro-credits per 1,000 tokens ÷ 1,000). */
export function ratesOf(price: Price): { inputPerMillion: number; outputPerMillion: number } {
  return {
    inputPerMillion: Number(price.per1kInputTokens) / 1000,
    outputPerMillion: Number(price.per1kOutputTokens) / 1000,
  };
}

const combined = (price: Price): bigint => price.per1kInputTokens + price.per1kOutputTokens;

/** Candidates cheapest first by input plus output rate; equal rates keep the given order. */
export function rank<T extends Routable>(candidates: T[]): T[] {
  return candidates
    .map((c, i) => ({ c, i }))
    .sort((a, b) => {
      const d = combined(a.c.entry.price) - combined(b.c.entry.price);
      return d === 0n ? a.i - b.i : d < 0n ? -1 : 1;
    })
    .map(({ c }) => c);
}

/** Why a candidate may not take a request, or null when it may. */
export function exclusionOf(
  entry: CatalogEntry,
  needs: RequestNeeds,
  rules: Pick<ProjectRouterRow, 'maxPromptTokens'>,
): string | null {
  if (entry.task === 'embedding') return 'an embedding model does not answer chat calls';
  if (needs.schema && entry.task !== 'extraction') return 'the request has a schema: extraction models only';
  if (!needs.schema && entry.task === 'extraction') return 'an extraction model needs a schema';
  if (needs.tools && !entry.upstream) return 'the request has tools: upstream models only';
  if (needs.responseFormat && entry.task !== 'extraction' && !entry.upstream)
    return 'the request asks for JSON (response_format): upstream and extraction models only';
  if (needs.promptLogprobs && entry.upstream) return "the request asks for the prompt's log probabilities (echo)";
  if (needs.logitBias) return "the request has logit_bias, whose token ids are the reference model's";
  if (rules.maxPromptTokens > 0 && needs.promptTokens > rules.maxPromptTokens)
    return `the prompt is longer than ${rules.maxPromptTokens} tokens`;
  return null;
}

/**
 * The models to try, in order: the cheapest candidate the request allows (if
 * any), then the reference. Only the first may fail over, and only to the reference.
 */
export function routePlan<T extends Routable>(
  candidates: T[],
  reference: T,
  needs: RequestNeeds,
  rules: Pick<ProjectRouterRow, 'maxPromptTokens'>,
): T[] {
  const pick = rank(candidates).find((c) => exclusionOf(c.entry, needs, rules) === null);
  return pick ? [pick, reference] : [reference];
}

/** Reference rate minus routed rate, per million tokens. */
export interface Savings {
  inputPerMillion: number;
  outputPerMillion: number;
}

/**
 * What routing saved against the reference: set only when the routed model is
 * below it (no rate above the reference's, and at least one below).
 */
export function savingsOf(routed: Price, reference: Price): Savings | undefined {
  const input = reference.per1kInputTokens - routed.per1kInputTokens;
  const output = reference.per1kOutputTokens - routed.per1kOutputTokens;
  if (input < 0n || output < 0n || (input === 0n && output === 0n)) return undefined;
  return { inputPerMillion: Number(input) / 1000, outputPerMillion: Number(output) / 1000 };
}
