/**
 * Chat: the one inference core behind the compatible surfaces and GenerateText.
 * It resolves the model (a built-in or upstream catalog model, a training job,
 * or a project's active deployment), checks the credits, and answers with a
 * stream of pieces from the right server: the operator's upstream provider, a
 * model-server's decoder (with prompt-cache breakpoints), or a model-server's
 * extraction model (one piece: the JSON result). Every reply is metered before
 * its last piece; see chat-relay.ts for what a cut stream costs.
 */
import { Reasons, errors } from '@whetstone/errors';
import { decoderTokens, extractionTokens } from '@whetstone/ml';
import { priceOf } from '../domain/catalog';
import {
  approxTokens,
  type ChatMessage,
  type ChatPiece,
  type ChatRequest,
  limitCacheMarkers,
  NO_TOKENS,
  promptText,
  textOf,
  type TokenUsage,
} from '../domain/chat';
import type { ProjectRouterRow } from '../domain/routing';
import type { Caller, ChatTurn, InferenceTask } from '../domain/model';
import { type ChatContext, meterReply, relay } from './chat-relay';
import type { RouterDeps } from './deps';
import type { CacheBreakpoint, UpstreamEvent } from './ports';
import { failsOver, routeCall, routerOf } from './project-router';
import { chatTarget, modelTarget, requireTask, resolveTarget, type Target } from './resolve-target';

export interface ChatCall {
  caller: Caller;
  /** Minted by the caller (deps.ids) so every piece can carry it; the usage key and, when stored, the inference id. */
  responseId: string;
  request: ChatRequest;
  /** GenerateText: the project named apart from the model, and only decoders accepted. */
  decoderOnly?: { projectId: string };
  /** What the call costs as a percent of its catalog price (a batched call's discount); unset: 100. */
  pricePercent?: number;
}

/** Output tokens assumed for a built-in decoder's credit check when the call sets no limit. */
const DEFAULT_MAX_TOKENS = 128;

/**
 * A field this model cannot honour: the message says why, the field's own entry what is wrong with it (by
 * default, that it is not supported). The compatible surfaces print them as one line, `<message>: <field>:
 * <entry>`, so the message ends without a full stop and the two never disagree.
 */
function refuse(
  field: 'schema' | 'tools' | 'response_format' | 'logprobs' | 'logit_bias' | 'echo' | 'max_tokens',
  message: string,
  entry = 'is not supported by this model',
): never {
  throw errors.invalid(Reasons.VALIDATION_FAILED, message, [{ field, message: entry }]);
}

/** Streams the reply to one chat call; the last piece carries the finish reason, usage and ids. */
export async function* chat(deps: RouterDeps, call: ChatCall): AsyncGenerator<ChatPiece> {
  const { caller } = call;
  const request = limitCacheMarkers(call.request);
  const base = {
    caller,
    request,
    responseId: call.responseId,
    startedAt: deps.now(),
    t0: performance.now(),
    ...(call.pricePercent === undefined ? {} : { pricePercent: call.pricePercent }),
  };
  const router = call.decoderOnly ? null : await routerOf(deps, caller, request.model);
  if (router) return yield* routedReply(deps, base, router);
  const { target, projectId } = call.decoderOnly
    ? {
        target: await resolveTarget(
          deps,
          caller,
          { modelId: request.model, projectId: call.decoderOnly.projectId },
          'decoder',
        ),
        projectId: call.decoderOnly.projectId,
      }
    : await chatTarget(deps, caller, request.model);
  if (call.decoderOnly) requireTask(target, 'decoder');
  yield* serve(deps, { ...base, target, projectId, task: taskOf(target) });
}

const taskOf = (target: Target): InferenceTask => (target.entry.task === 'extraction' ? 'extract' : 'generate');

type Server = 'extraction' | 'upstream' | 'decoder';

/** What serves a resolved call, once its request fits that server: a schema only for extraction, tools only upstream. */
function serverOf(request: ChatRequest, target: Target): Server {
  if (target.entry.task === 'embedding')
    throw errors.precondition(
      Reasons.MODEL_NOT_SERVABLE,
      `Model '${request.model}' is an embedding model: call it through POST /v1/embeddings.`,
    );
  const logprobs = request.options.logprobs !== undefined;
  const bias = request.options.logitBias !== undefined;
  if (target.entry.task === 'extraction') {
    if (logprobs)
      refuse('logprobs', `Model '${request.model}' is an extraction model: it has no token log probabilities`);
    if (bias) refuse('logit_bias', `Model '${request.model}' is an extraction model: it has no tokens to bias`);
    return 'extraction';
  }
  if (request.schemaJson.length)
    refuse('schema', `Model '${request.model}' is not an extraction model: leave out the schema`);
  if (target.entry.upstream) {
    upstreamFits(request, target);
    return 'upstream';
  }
  if (request.tools.length) refuse('tools', `Model '${request.model}' cannot call tools; only upstream models do`);
  if (request.responseFormat)
    refuse(
      'response_format',
      `Model '${request.model}' cannot constrain its reply to JSON; leave out response_format (or use type "text")`,
    );
  return 'decoder';
}

/** Refuses what an upstream provider cannot give: scores of the prompt, and to a Messages-API one token controls. */
function upstreamFits(request: ChatRequest, target: Target): void {
  const { options, model } = request;
  if (options.logprobs !== undefined && target.entry.provider === 'anthropic')
    refuse('logprobs', `Model '${model}' is served by a Messages-API provider, which gives no log probabilities`);
  if (options.logitBias && target.entry.provider === 'anthropic')
    refuse('logit_bias', `Model '${model}' is served by a Messages-API provider, which takes no logit_bias`);
  if (options.promptOnly)
    refuse(
      'max_tokens',
      `Model '${model}' is an upstream model: max_tokens 0 (the echoed prompt alone) is for built-in decoders; ask for at least 1 token`,
    );
  if (options.logprobs !== undefined && options.promptLogprobs)
    refuse(
      'echo',
      `Model '${model}' is an upstream model, whose provider gives no log probabilities of the prompt; leave out logprobs with echo`,
    );
}

/** Hands a resolved call to what serves it: an extraction model, an upstream provider or a decoder. */
async function* serve(deps: RouterDeps, ctx: ChatContext): AsyncGenerator<ChatPiece> {
  const server = serverOf(ctx.request, ctx.target);
  if (server === 'extraction') return yield* extractionReply(deps, ctx);
  if (server === 'upstream') return yield* upstreamReply(deps, ctx);
  yield* decoderReply(deps, ctx);
}

/**
 * The input tokens a Chat call with this request would be billed for, without
 * calling a model: exact for the built-in models (the model-server counts with
 * the same functions), 4 characters a token for an upstream model. A router
 * project counts for its reference model.
 */
export async function countChatTokens(deps: RouterDeps, caller: Caller, request: ChatRequest): Promise<number> {
  const router = await routerOf(deps, caller, request.model);
  const target = router
    ? await modelTarget(deps, caller, router.referenceModel, 'any')
    : (await chatTarget(deps, caller, request.model)).target;
  const server = serverOf(request, target);
  if (server === 'extraction') return extractionTokens(extractionText(request));
  if (server === 'upstream') return approxTokens(promptText(request));
  return decoderPrompt(request).turns.reduce((n, t) => n + decoderTokens(t.content), 0);
}

/** The text an extraction model reads: the last user turn, with a schema to extract with. */
function extractionText(request: ChatRequest): string {
  if (!request.schemaJson.length)
    refuse(
      'schema',
      `Model '${request.model}' extracts with a schema, and the request has none`,
      'is required for extraction models: give entities, classifications, relations or structures',
    );
  const lastUser = [...request.messages].reverse().find((m) => m.role === 'user');
  const text = lastUser ? textOf(lastUser.content) : '';
  if (!text)
    throw errors.invalid(Reasons.VALIDATION_FAILED, 'An extraction model reads the last user message; it is empty.', [
      { field: 'messages', message: 'needs a user message with text' },
    ]);
  return text;
}

/**
 * A router project's call (routing policy: project-router.ts): the pick
 * answers, billed and recorded as itself, and its last piece names it with the
 * savings against the reference; the reference answers when nothing was
 * picked, or when the pick failed over before its first piece. Never retried
 * once a piece was sent.
 */
async function* routedReply(
  deps: RouterDeps,
  base: Omit<ChatContext, 'target' | 'projectId' | 'task'>,
  router: ProjectRouterRow,
): AsyncGenerator<ChatPiece> {
  const { attempts, reference, savings } = await routeCall(deps, base.caller, base.request, router);
  for (const [i, target] of attempts.entries()) {
    const routed = target !== reference;
    const ctx: ChatContext = { ...base, target, projectId: router.projectId, task: taskOf(target) };
    let started = false;
    try {
      for await (const piece of serve(deps, ctx)) {
        started = true;
        if ('done' in piece && routed) {
          const saved = savings(target);
          yield { done: { ...piece.done, routedModel: target.ref.modelId, ...(saved ? { savings: saved } : {}) } };
        } else yield piece;
      }
      return;
    } catch (err) {
      if (started || i === attempts.length - 1 || !failsOver(err, base.request.options.signal)) throw err;
      deps.logger.warn(
        { err, projectId: router.projectId, model: target.ref.modelId, reference: reference.ref.modelId },
        'the routed model failed before its first piece; the reference answers',
      );
    }
  }
}

/** An extraction model answers the last user turn with its JSON result, in one piece. */
async function* extractionReply(deps: RouterDeps, ctx: ChatContext): AsyncGenerator<ChatPiece> {
  const { request, target } = ctx;
  const text = extractionText(request);
  await deps.billing.checkSpendable(
    ctx.caller.teamId,
    priceOf(target.entry.price, { inputTokens: approxTokens(text) }),
    false,
  );
  const out = await deps.fleet.extract(target.ref, [text], request.schemaJson, {
    threshold: 0,
    includeConfidence: false,
    includeSpans: false,
  });
  const results = JSON.parse(Buffer.from(out.resultsJson).toString('utf8')) as Record<string, unknown>[];
  const reply = JSON.stringify(results[0] ?? {});
  yield { delta: { text: reply } };
  const tokens = { ...NO_TOKENS, inputTokens: out.inputTokens };
  yield { done: await meterReply(deps, ctx, { tokens, text: reply, finishReason: 'stop', outputs: results }) };
}

/** The operator's upstream provider answers; calling one needs a paid balance (directModel). */
async function* upstreamReply(deps: RouterDeps, ctx: ChatContext): AsyncGenerator<ChatPiece> {
  const { request, target } = ctx;
  const upstream = target.entry.upstream!;
  const promptTokens = approxTokens(promptText(request));
  await deps.billing.checkSpendable(
    ctx.caller.teamId,
    priceOf(target.entry.price, {
      inputTokens: promptTokens,
      outputTokens: request.options.maxTokens || upstream.defaultMaxTokens,
    }),
    true,
  );
  const events = deps.upstreams.stream({
    modelId: target.entry.id,
    model: upstream,
    system: request.system,
    messages: request.messages,
    tools: request.tools,
    ...(request.toolsCache ? { toolsCache: request.toolsCache } : {}),
    ...(request.responseFormat ? { responseFormat: request.responseFormat } : {}),
    ...(request.toolChoice ? { toolChoice: request.toolChoice } : {}),
    options: request.options,
  });
  yield* relay(deps, ctx, {
    events,
    estimate: (text, toolArguments) => ({
      ...NO_TOKENS,
      inputTokens: promptTokens,
      outputTokens: approxTokens(text + toolArguments),
    }),
  });
}

/**
 * The built-in decoder's turns: the system blocks as a first system turn, tool
 * turns read as user turns; and a breakpoint per cache marker, as the turn
 * index and the UTF-16 length of the turn's blocks up to the marker.
 */
export function decoderPrompt(request: ChatRequest): { turns: ChatTurn[]; breakpoints: CacheBreakpoint[] } {
  const blocks: { role: ChatTurn['role']; content: ChatMessage['content'] }[] = [
    ...(request.system.length ? [{ role: 'system' as const, content: request.system }] : []),
    ...request.messages.map((m) => ({ role: m.role === 'tool' ? ('user' as const) : m.role, content: m.content })),
  ];
  const breakpoints: CacheBreakpoint[] = [];
  blocks.forEach((turn, index) => {
    let chars = 0;
    for (const block of turn.content) {
      chars += block.text.length;
      if (block.cache) breakpoints.push({ turn: index, chars, ttlSeconds: block.cache.ttlSeconds });
    }
  });
  return {
    turns: blocks.map((b) => ({ role: b.role, content: textOf(b.content) })),
    breakpoints,
  };
}

/** A model-server's decoder (a trained job or a project's deployment) answers; its tokens are bytes. */
async function* decoderReply(deps: RouterDeps, ctx: ChatContext): AsyncGenerator<ChatPiece> {
  const { request, target } = ctx;
  const { turns, breakpoints } = decoderPrompt(request);
  const promptBytes = turns.reduce((n, t) => n + decoderTokens(t.content), 0);
  await deps.billing.checkSpendable(
    ctx.caller.teamId,
    priceOf(target.entry.price, {
      inputTokens: promptBytes,
      outputTokens: request.options.promptOnly ? 0 : request.options.maxTokens || DEFAULT_MAX_TOKENS,
    }),
    false,
  );
  const stream = deps.fleet.generate(target.ref, turns, request.options, breakpoints);
  const events = (async function* (): AsyncGenerator<UpstreamEvent> {
    for await (const { text, logprobs, promptLogprobs } of stream.chunks)
      yield {
        delta: { text, ...(logprobs.length ? { logprobs } : {}), ...(promptLogprobs.length ? { promptLogprobs } : {}) },
      };
    const end = stream.done();
    const usage: TokenUsage = {
      inputTokens: end.inputTokens - end.cacheReadTokens - end.cacheWriteTokens,
      cacheReadTokens: end.cacheReadTokens,
      cacheWriteTokens: end.cacheWriteTokens,
      outputTokens: end.outputTokens,
      reasoningTokens: 0,
    };
    yield { usage };
    yield { finish: end.finishReason, ...(end.stopSequence ? { stopSequence: end.stopSequence } : {}) };
  })();
  yield* relay(deps, ctx, {
    events,
    estimate: (text) => ({ ...NO_TOKENS, inputTokens: promptBytes, outputTokens: decoderTokens(text) }),
  });
}
