import { z } from 'zod';
import type { ChatBlock, ChatInput, ChatTurn } from '../../../../application/ports';
import { invalidBody, invalidQuery } from '../../validate';

/** Shared pieces of the compatible surfaces' requests: texts, cache markers, sampling. */

export const MAX_TEXT = 1_000_000;
export const Text = z.string().max(MAX_TEXT, `must be at most ${MAX_TEXT.toLocaleString('en-US')} characters`);
export const ModelId = z.string().trim().min(1, 'must not be empty').max(200);

/** `{type: "ephemeral", ttl?}` with ttl like `5m` or `1h`. */
export const CacheControl = z.object({
  type: z.literal('ephemeral'),
  ttl: z
    .string()
    .regex(/^[1-9]\d{0,4}[smh]$/, 'must be a duration such as "5m" or "1h"')
    .optional(),
});
export type CacheControl = z.infer<typeof CacheControl>;

export const Temperature = z.number().min(0).max(2);
export const TopP = z.number().gt(0).max(1);
export const MaxTokens = z.number().int().min(1).max(1_000_000);
export const Stop = z.union([z.string().min(1), z.array(z.string().min(1)).max(4)], {
  error: 'must be a non-empty string or a list of at most 4 of them',
});
export const Seed = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** OpenAI's `frequency_penalty` and `presence_penalty`. */
export const Penalty = z.number().min(-2).max(2);
/** OpenAI's penalties as the chat core's options (left out when 0). */
export const penaltiesOf = (body: { frequency_penalty?: number | null; presence_penalty?: number | null }) => ({
  ...(body.frequency_penalty ? { frequencyPenalty: body.frequency_penalty } : {}),
  ...(body.presence_penalty ? { presencePenalty: body.presence_penalty } : {}),
});
/** Most entries OpenAI's `logit_bias` takes. */
export const MAX_LOGIT_BIAS_ENTRIES = 300;
/**
 * OpenAI's `logit_bias`: token ids (as strings, the model's tokenizer's) to biases from −100 to 100. Whether an id
 * exists is the model's to say (the built-in decoders have 260 tokens; an upstream provider checks its own).
 */
export const LogitBias = z
  .record(
    z.string().regex(/^\d{1,9}$/),
    z.number().min(-100, 'biases run from -100 to 100').max(100, 'biases run from -100 to 100'),
    { error: 'must map token ids (whole numbers written as strings, such as "65") to biases from -100 to 100' },
  )
  .refine((bias) => Object.keys(bias).length <= MAX_LOGIT_BIAS_ENTRIES, {
    message: `may bias at most ${MAX_LOGIT_BIAS_ENTRIES} tokens`,
  });
/** `logit_bias` as the chat core's option (left out when it biases nothing). */
export const logitBiasField = (bias: Record<string, number> | null | undefined): Pick<ChatInput, 'logitBias'> =>
  bias && Object.keys(bias).length
    ? { logitBias: Object.fromEntries(Object.entries(bias).map(([id, b]) => [Number(id), b])) }
    : {};
/** OpenAI's `n`: how many choices to answer, each its own call (docs/api.md, "Several choices"). */
export const MAX_CHOICES = 8;
export const Choices = z.number().int().min(1).max(MAX_CHOICES, `must be at most ${MAX_CHOICES}`);

/**
 * The calls behind `n` choices: choice i samples with seed + i, so the first is the reply n = 1 gives and the others
 * differ from it (the built-in decoders are seeded; seed 0 without one). A stored call keeps one choice, so `store`
 * with n > 1 is refused.
 */
export function choiceInputs(input: ChatInput, n: number | null | undefined): ChatInput[] {
  const count = n ?? 1;
  if (count > 1 && input.store)
    throw invalidBody('n', 'must be 1 with store: true (a stored completion keeps one choice)');
  // A seed at the top of the range wraps to 0, 1, … rather than leave the safe integers.
  const seedOf = (i: number) => (input.seed <= Number.MAX_SAFE_INTEGER - i ? input.seed + i : i - 1);
  return Array.from({ length: count }, (_, i) => ({ ...input, seed: seedOf(i) }));
}
/** How many of the most likely tokens to report at each place of the reply (OpenAI's `top_logprobs`). */
export const TopLogprobs = z.number().int().min(0).max(20);
/** OpenAI's `metadata`: up to 16 string pairs, keys of at most 64 characters, values of at most 512. */
export const Metadata = z
  .record(z.string(), z.string({ error: 'values must be strings' }).max(512, 'values must be at most 512 characters'))
  .superRefine((m, ctx) => {
    const keys = Object.keys(m);
    if (keys.length > 16) ctx.addIssue({ code: 'custom', message: 'must hold at most 16 pairs' });
    const bad = keys.find((k) => k.length === 0 || k.length > 64);
    if (bad !== undefined) ctx.addIssue({ code: 'custom', message: 'keys must be 1–64 characters', path: [bad] });
  });
/**
 * The `metadata[key]=value` pairs of a query string (the gateway's simple query parser keeps the brackets in the
 * names), checked as OpenAI's metadata; undefined when there are none. 422 naming the parameter otherwise.
 */
export function metadataOfQuery(query: Record<string, unknown>): Record<string, string> | undefined {
  const pairs: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(query)) {
    const key = /^metadata\[(.*)\]$/s.exec(name)?.[1];
    if (key === undefined) continue;
    if (typeof value !== 'string') throw invalidQuery(name, 'must be given once, as metadata[key]=value');
    pairs[key] = value;
  }
  if (!Object.keys(pairs).length) return undefined;
  const parsed = Metadata.safeParse(pairs);
  if (!parsed.success) throw invalidQuery('metadata', parsed.error.issues[0]?.message ?? 'is not valid metadata');
  return parsed.data;
}
export const SchemaExtension = z.record(z.string(), z.unknown());

const JsonSchemaSpec = {
  name: z.string().regex(/^[\w-]{1,64}$/, 'must be 1–64 letters, digits, _ or -'),
  description: z.string().max(10_000).optional(),
  schema: z.record(z.string(), z.unknown()).optional(),
  strict: z.boolean().nullish(),
};

/** Chat completions' `response_format`: plain text, any JSON object, or JSON matching a schema. */
export const ResponseFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({ type: z.literal('json_schema'), json_schema: z.object(JsonSchemaSpec) }),
]);

/** The Responses API's `text.format`: the same choices, with the schema's fields beside `type`. */
export const TextFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({ type: z.literal('json_schema'), ...JsonSchemaSpec }),
]);

/** ChatInput's `responseFormat` (chat completions' shape) for JSON output; nothing for plain text. */
export function responseFormatField(
  format: z.infer<typeof ResponseFormat> | z.infer<typeof TextFormat> | null | undefined,
): Pick<ChatInput, 'responseFormat'> {
  if (!format || format.type === 'text') return {};
  if (format.type === 'json_object') return { responseFormat: { type: 'json_object' } };
  if ('json_schema' in format) return { responseFormat: { type: 'json_schema', json_schema: format.json_schema } };
  const { type: _type, ...spec } = format;
  return { responseFormat: { type: 'json_schema', json_schema: spec } };
}

const UNIT_SECONDS = { s: 1, m: 60, h: 3600 } as const;

/** Seconds of a marker's ttl; 0 means the default lifetime. */
export function ttlSeconds(cc: CacheControl): number {
  if (!cc.ttl) return 0;
  return Number(cc.ttl.slice(0, -1)) * UNIT_SECONDS[cc.ttl.slice(-1) as keyof typeof UNIT_SECONDS];
}

/** A text block, keeping its cache marker only where the surface honours one. */
export function block(text: string, cc: CacheControl | undefined, honoured: boolean): ChatBlock {
  return cc && honoured ? { text, cacheTtlSeconds: ttlSeconds(cc) } : { text };
}

export const turn = (role: ChatTurn['role'], content: ChatBlock[], extra: Partial<ChatTurn> = {}): ChatTurn => ({
  role,
  content,
  toolCalls: [],
  toolCallId: '',
  ...extra,
});

/** Cache breakpoints per request (spec, Limits). */
export const MAX_BREAKPOINTS = 4;

/**
 * Keep the first four cache markers in prompt order (tools, system, messages)
 * and drop the rest, as the spec says further markers are ignored.
 */
export function capBreakpoints(input: ChatInput): ChatInput {
  let left = MAX_BREAKPOINTS;
  const keep = (b: ChatBlock): ChatBlock => {
    if (b.cacheTtlSeconds === undefined) return b;
    if (left > 0) {
      left -= 1;
      return b;
    }
    return { text: b.text };
  };
  let toolsCacheTtlSeconds = input.toolsCacheTtlSeconds;
  if (toolsCacheTtlSeconds !== undefined) left -= 1;
  if (left < 0) toolsCacheTtlSeconds = undefined;
  const system = input.system.map(keep);
  const messages = input.messages.map((m) => ({ ...m, content: m.content.map(keep) }));
  const { toolsCacheTtlSeconds: _, ...rest } = input;
  return {
    ...rest,
    system,
    messages,
    ...(toolsCacheTtlSeconds === undefined ? {} : { toolsCacheTtlSeconds }),
  };
}

/** Defaults shared by every surface, applied once here: inner services take every value as given. */
export const SAMPLING_DEFAULTS = { temperature: 1, topP: 1, maxTokens: 0, seed: 0 } as const;

export const stopList = (stop: string | string[] | undefined | null): string[] =>
  typeof stop === 'string' ? [stop] : (stop ?? []);

/** A whole tool call in chat completions' shape: live answers and stored ones read back alike. */
export const toolCallOut = (c: { id: string; name: string; arguments: string }) => ({
  id: c.id,
  type: 'function' as const,
  function: { name: c.name, arguments: c.arguments },
});

/** OpenAI's cursor list: `{object: "list", data, first_id, last_id, has_more}`. */
export function openAiList<T extends { id?: unknown }>(data: T[], hasMore: boolean) {
  const idOf = (item: T | undefined) => (item?.id as string | undefined) ?? null;
  return { object: 'list' as const, data, first_id: idOf(data[0]), last_id: idOf(data.at(-1)), has_more: hasMore };
}
