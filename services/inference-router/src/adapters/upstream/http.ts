/**
 * HTTP to upstream providers: the address guard (no loopback, private or
 * link-local target unless the operator allows the host), one streaming
 * request with an idle timeout and the caller's cancellation, the
 * server-sent-event reader, and the one table from provider failures to
 * AppErrors. The API key goes in one header and is never logged.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Agent } from 'undici';
import { isNonPublicAddress, publicOnlyLookup } from '@whetstone/config';
import { AppError, Reasons, errors } from '@whetstone/errors';
import type { Logger } from '@whetstone/telemetry';

export interface HttpOptions {
  /** Hosts allowed to be (or resolve to) non-public addresses; `*` allows any. */
  allowPrivateHosts: string[];
  /** Nothing received for this long, before or during the reply, fails the call. */
  idleTimeoutMs: number;
  logger: Logger;
}

const allowedHost = (options: HttpOptions, host: string) =>
  options.allowPrivateHosts.includes('*') || options.allowPrivateHosts.includes(host.toLowerCase());

const forbidden = (modelId: string, cause?: unknown) =>
  new AppError(
    'FailedPrecondition',
    'UPSTREAM_ADDRESS_FORBIDDEN',
    `Model '${modelId}' is not servable: its provider's address is not allowed by the operator.`,
    cause === undefined ? {} : { cause },
  );

const pools = new WeakMap<HttpOptions, Agent>();

/**
 * The connection pool of one set of options. Every connection it opens checks
 * the addresses it is about to connect to, so a name that resolved to a public
 * address for guardHost and to a private one a moment later (DNS rebinding, or
 * a record changed within guardHost's 30 s of trust) is refused too.
 */
function poolOf(options: HttpOptions): Agent {
  let pool = pools.get(options);
  if (!pool) {
    pool = new Agent({ connect: { lookup: publicOnlyLookup((host) => allowedHost(options, host)) } });
    pools.set(options, pool);
  }
  return pool;
}

/** Whether a fetch failed because the connect-time lookup refused a non-public address. */
function refusedAddress(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e)
    if (e.code === 'ENONPUBLIC') return true;
  return false;
}

/** Refuses a provider whose host is, or resolves to, a non-public address the operator did not allow. */
export async function guardHost(baseUrl: string, modelId: string, options: HttpOptions): Promise<void> {
  const host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (allowedHost(options, host)) return;
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
  if (!addresses.length)
    throw errors.unavailable(
      Reasons.DEPENDENCY_UNAVAILABLE,
      `The provider of model '${modelId}' could not be reached.`,
    );
  if (addresses.some(isNonPublicAddress)) {
    options.logger.warn(
      { model: modelId, host },
      'upstream host is not public and not in UPSTREAM_ALLOW_PRIVATE_HOSTS',
    );
    throw forbidden(modelId);
  }
}

/** A provider's error text, from its JSON body when it has one (both shapes have `error.message`). */
function upstreamMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const message =
      typeof parsed.error === 'object' ? parsed.error?.message : (parsed.error ?? parsed.message ?? undefined);
    if (typeof message === 'string' && message) return message.slice(0, 500);
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return body.slice(0, 200) || 'no message';
}

const retryAfter = (headers: Headers): number | undefined => {
  const value = Number(headers.get('retry-after'));
  return Number.isFinite(value) && value > 0 ? value : undefined;
};

/**
 * THE mapping of a provider's failure: 429 → ResourceExhausted with its
 * Retry-After; 529, or 503 saying overloaded → Unavailable UPSTREAM_OVERLOADED
 * (529 on the messages surface); 400/404/413/422 → InvalidArgument with the
 * provider's message; anything else (auth, other 5xx) → Unavailable DEPENDENCY_UNAVAILABLE.
 */
export function upstreamFailure(status: number, headers: Headers, body: string, modelId: string): AppError {
  const message = upstreamMessage(body);
  const wait = retryAfter(headers);
  const timing = wait === undefined ? {} : { retryAfterSeconds: wait };
  if (status === 429)
    return new AppError(
      'ResourceExhausted',
      'UPSTREAM_RATE_LIMITED',
      `The provider of model '${modelId}' is rate limiting: ${message}`,
      {
        retryAfterSeconds: wait ?? 1,
        metadata: { scope: 'upstream' },
      },
    );
  if (status === 529 || (status === 503 && /overload/i.test(body)))
    return new AppError(
      'Unavailable',
      Reasons.UPSTREAM_OVERLOADED,
      `The provider of model '${modelId}' is overloaded; retry later.`,
      timing,
    );
  if ([400, 404, 413, 422].includes(status))
    return errors.invalid('UPSTREAM_REJECTED', `The provider of model '${modelId}' rejected the request: ${message}`);
  return new AppError(
    'Unavailable',
    Reasons.DEPENDENCY_UNAVAILABLE,
    `The provider of model '${modelId}' is unavailable (${status}).`,
    timing,
  );
}

/** A mid-stream error event's type (Anthropic `overloaded_error`, …) as the same failures. */
export function streamFailure(type: string, message: string, modelId: string): AppError {
  const status =
    type === 'overloaded_error'
      ? 529
      : type === 'rate_limit_error'
        ? 429
        : type === 'invalid_request_error'
          ? 400
          : 500;
  return upstreamFailure(status, new Headers(), JSON.stringify({ error: { message } }), modelId);
}

const unreachable = (modelId: string, cause: unknown) =>
  new AppError(
    'Unavailable',
    Reasons.DEPENDENCY_UNAVAILABLE,
    `The provider of model '${modelId}' could not be reached.`,
    { cause },
  );

const idle = (modelId: string, ms: number) =>
  new AppError(
    'Unavailable',
    Reasons.DEPENDENCY_UNAVAILABLE,
    `The provider of model '${modelId}' sent nothing for ${Math.round(ms / 1000)} s.`,
  );

/** One server-sent event. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * The idle clock of one provider request: its signal aborts when the caller's does or when `arm` was not called
 * again within `ms`; `stop` ends the clock and the request.
 */
function idleClock(callSignal: AbortSignal | undefined, ms: number) {
  const local = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const clock = {
    signal: callSignal ? AbortSignal.any([callSignal, local.signal]) : local.signal,
    timedOut: () => timedOut,
    arm() {
      clearTimeout(timer);
      timer = setTimeout(() => ((timedOut = true), local.abort()), ms);
    },
    pause: () => clearTimeout(timer),
    stop() {
      clearTimeout(timer);
      local.abort();
    },
  };
  clock.arm();
  return clock;
}

/**
 * POSTs a JSON body and yields the response's server-sent events as they
 * arrive. The caller's signal aborts the request (its connection closes, so
 * the provider stops generating); an idle provider fails the call.
 */
export async function* postStream(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  call: { modelId: string; signal: AbortSignal | undefined },
  options: HttpOptions,
): AsyncGenerator<SseEvent> {
  const clock = idleClock(call.signal, options.idleTimeoutMs);
  try {
    const res = await post(url, headers, body, 'text/event-stream', clock.signal, call.modelId, options);
    if (!res.body) throw unreachable(call.modelId, new Error('empty body'));
    for await (const event of readEvents(res.body, clock.arm)) {
      // A slow caller is not an idle provider: the clock stops while the event is being relayed.
      clock.pause();
      yield event;
      clock.arm();
    }
  } catch (err) {
    failure(err, clock.timedOut(), call, options);
  } finally {
    clock.stop();
  }
}

/**
 * POSTs a JSON body and answers the provider's JSON reply. The caller's signal aborts the request; a provider
 * that has not answered within the idle timeout fails the call, as a silent stream does.
 */
export async function postJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  call: { modelId: string; signal: AbortSignal | undefined },
  options: HttpOptions,
): Promise<unknown> {
  const clock = idleClock(call.signal, options.idleTimeoutMs);
  try {
    const res = await post(url, headers, body, 'application/json', clock.signal, call.modelId, options);
    const text = await res.text();
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw upstreamFailure(502, new Headers(), 'malformed JSON reply', call.modelId);
    }
  } catch (err) {
    return failure(err, clock.timedOut(), call, options);
  } finally {
    clock.stop();
  }
}

/** One POST to a provider through the guarded pool; a status other than 200 is the provider's failure. */
async function post(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  accept: string,
  signal: AbortSignal,
  modelId: string,
  options: HttpOptions,
): Promise<Response> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, ...headers },
    body: JSON.stringify(body),
    // A redirect is never followed: its target could be any address.
    redirect: 'manual',
    signal,
    dispatcher: poolOf(options),
  });
  if (res.status !== 200) {
    const text = await res.text().catch(() => '');
    throw upstreamFailure(res.status, res.headers, text, modelId);
  }
  return res;
}

/** A failed provider request as the error the caller sees: timed out, cancelled, refused address, or unreachable. */
function failure(
  err: unknown,
  timedOut: boolean,
  call: { modelId: string; signal: AbortSignal | undefined },
  options: HttpOptions,
): never {
  if (timedOut) throw idle(call.modelId, options.idleTimeoutMs);
  if (call.signal?.aborted)
    throw new AppError('Cancelled', 'CLIENT_DISCONNECTED', 'The caller went away.', { cause: err });
  if (refusedAddress(err)) {
    options.logger.warn(
      { model: call.modelId },
      'upstream connection refused: the name resolved to a non-public address',
    );
    throw forbidden(call.modelId, err);
  }
  throw err instanceof AppError ? err : unreachable(call.modelId, err);
}

/** Splits a text/event-stream body into events; `onBytes` is called whenever bytes arrive. */
async function* readEvents(body: ReadableStream<Uint8Array>, onBytes: () => void): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    onBytes();
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const raw = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of raw.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length) yield { event, data: data.join('\n') };
    }
  }
}
