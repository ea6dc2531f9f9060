/**
 * The operator's upstream providers behind the Upstreams port: one adapter,
 * two chat dialects (OpenAI chat completions, Anthropic Messages), picked by the
 * provider's kind, and OpenAI's embeddings. Every call checks the provider's
 * address; a chat call streams and relays each event as it arrives.
 */
import type { UpstreamModelRef } from '@whetstone/catalog';
import type { UpstreamCall, UpstreamEvent, Upstreams } from '../../application/ports';
import type { UpstreamProviderConfig } from '../../upstream-config';
import { ANTHROPIC_VERSION, anthropicBody, anthropicParser } from './anthropic';
import { embeddingsBody, embeddingsOf } from './embeddings';
import { guardHost, type HttpOptions, postJson, postStream, streamFailure, upstreamFailure } from './http';
import { openaiBody, openaiEvents } from './openai';

export { guardHost, upstreamFailure, type HttpOptions } from './http';

type Parse = (data: string) => { events: UpstreamEvent[]; error?: { type: string; message: string } };

interface Dialect {
  path: string;
  headers(apiKey: string): Record<string, string>;
  body(call: UpstreamCall): Record<string, unknown>;
  parser(): Parse;
}

const DIALECTS: Record<UpstreamProviderConfig['kind'], Dialect> = {
  openai: {
    path: '/v1/chat/completions',
    headers: (apiKey): Record<string, string> => (apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
    body: openaiBody,
    parser: () => openaiEvents,
  },
  anthropic: {
    path: '/v1/messages',
    headers: (apiKey) => ({ 'anthropic-version': ANTHROPIC_VERSION, ...(apiKey ? { 'x-api-key': apiKey } : {}) }),
    body: anthropicBody,
    parser: anthropicParser,
  },
};

/** How long a provider's address, once checked, is trusted before it is resolved and checked again. */
const VERIFIED_FOR_MS = 30_000;

export function httpUpstreams(providers: UpstreamProviderConfig[], options: HttpOptions): Upstreams {
  const byName = new Map(providers.map((p) => [p.name, p]));
  const verifiedUntil = new Map<string, number>();
  /** The provider of a model, its address checked at most every VERIFIED_FOR_MS. */
  async function providerOf(model: UpstreamModelRef, modelId: string): Promise<UpstreamProviderConfig> {
    const provider = byName.get(model.provider);
    if (!provider) throw new Error(`no upstream provider named ${model.provider}`);
    if ((verifiedUntil.get(provider.name) ?? 0) < Date.now()) {
      await guardHost(provider.baseUrl, modelId, options);
      verifiedUntil.set(provider.name, Date.now() + VERIFIED_FOR_MS);
    }
    return provider;
  }
  return {
    async embed(call) {
      const provider = await providerOf(call.model, call.modelId);
      if (provider.kind !== 'openai') throw new Error(`provider ${provider.name} has no embeddings endpoint`);
      const reply = await postJson(
        `${provider.baseUrl}/v1/embeddings`,
        DIALECTS.openai.headers(provider.apiKey),
        embeddingsBody(call),
        { modelId: call.modelId, signal: undefined },
        options,
      );
      return embeddingsOf(reply, call);
    },
    async *stream(call) {
      const provider = await providerOf(call.model, call.modelId);
      const dialect = DIALECTS[provider.kind];
      const parse = dialect.parser();
      const events = postStream(
        `${provider.baseUrl}${dialect.path}`,
        dialect.headers(provider.apiKey),
        dialect.body(call),
        { modelId: call.modelId, signal: call.options.signal },
        options,
      );
      for await (const sse of events) {
        let result: ReturnType<Parse>;
        try {
          result = parse(sse.data);
        } catch {
          throw upstreamFailure(502, new Headers(), 'malformed stream event', call.modelId);
        }
        const { events: parsed, error } = result;
        if (error) throw streamFailure(error.type, error.message, call.modelId);
        yield* parsed;
      }
    },
  };
}
