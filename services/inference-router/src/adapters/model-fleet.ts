import type { Client } from '@connectrpc/connect';
import { AppError, Reasons, errors } from '@whetstone/errors';
import { fnv1a } from '@whetstone/ml';
import { FinishReason as PbFinishReason, ModelServerService, ModelState } from '@whetstone/proto/inference/v1';
import type { CacheBreakpoint, ExtractOptions, GenerateStream, ModelFleet } from '../application/ports';
import type { ChatTurn, GenerateOptions, ModelRef } from '../domain/model';
import { chatRoleToPb, finishReasonOf } from './proto-kinds';

export interface FleetMember {
  addr: string;
  client: Client<typeof ModelServerService>;
}

/**
 * The model-servers behind the router. Built-in models (preloaded on every
 * server) go round-robin; a trained model goes to the servers known to hold it
 * ready, else to its rendezvous-hash owner, which starts loading it (425 until
 * ready). States are learned from replies and from a periodic poll.
 */
export class GrpcModelFleet implements ModelFleet {
  private readonly ready = new Map<string, Set<string>>();
  private next = 0;
  private poller: NodeJS.Timeout | undefined;

  constructor(private readonly members: FleetMember[]) {
    if (!members.length) throw new Error('at least one model-server address is needed');
  }

  /** Poll every server's model states (failures are ignored: the server may be restarting). */
  startPolling(intervalMs = 2_000): void {
    const poll = async () => {
      await Promise.all(
        this.members.map(async (m) => {
          try {
            const res = await m.client.listModelStates({}, { timeoutMs: 1_000 });
            for (const set of this.ready.values()) set.delete(m.addr);
            for (const model of res.models)
              if (model.state === ModelState.READY) this.mark(model.modelId, m.addr, true);
          } catch {
            for (const set of this.ready.values()) set.delete(m.addr);
          }
        }),
      );
    };
    this.poller = setInterval(() => void poll(), intervalMs);
    this.poller.unref();
    void poll();
  }

  stop(): void {
    if (this.poller) clearInterval(this.poller);
  }

  async extract(ref: ModelRef, texts: string[], schemaJson: Uint8Array, options: ExtractOptions) {
    const member = this.choose(ref);
    try {
      const res = await member.client.extract({
        model: ref,
        texts,
        schemaJson,
        threshold: options.threshold,
        includeConfidence: options.includeConfidence,
        includeSpans: options.includeSpans,
      });
      if (ref.key) this.mark(ref.modelId, member.addr, true);
      return { resultsJson: res.resultsJson, inputTokens: Number(res.inputTokens) };
    } catch (err) {
      if (err instanceof AppError && err.reason === Reasons.MODEL_WARMING) this.mark(ref.modelId, member.addr, false);
      throw err;
    }
  }

  /** Rejects with a reason safe to show users: the model-server's own, or a timeout. */
  async warm(ref: ModelRef, timeoutMs: number): Promise<void> {
    const member = this.owner(ref.modelId);
    const deadline = Date.now() + timeoutMs;
    let res: { state: ModelState; reason: string } = await member.client.loadModel({ model: ref });
    while (res.state === ModelState.WARMING) {
      if (Date.now() > deadline)
        throw errors.precondition(
          Reasons.MODEL_NOT_SERVABLE,
          `model ${ref.modelId} did not become ready within ${Math.round(timeoutMs / 1000)} s`,
        );
      await new Promise((r) => setTimeout(r, 50));
      res = await member.client.getModelState({ modelId: ref.modelId });
      // The server restarted and lost it: ask again.
      if (res.state === ModelState.UNSPECIFIED) res = await member.client.loadModel({ model: ref });
    }
    if (res.state !== ModelState.READY)
      throw errors.precondition(Reasons.MODEL_NOT_SERVABLE, res.reason || `model ${ref.modelId} failed to load`);
    this.mark(ref.modelId, member.addr, true);
  }

  generate(
    ref: ModelRef,
    messages: ChatTurn[],
    options: GenerateOptions,
    breakpoints: CacheBreakpoint[] = [],
  ): GenerateStream {
    const member = ref.key ? this.owner(ref.modelId) : this.members[this.next++ % this.members.length]!;
    let end: ReturnType<GenerateStream['done']> = {
      finishReason: 'length',
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    };
    const { signal, ...sampling } = options;
    const stream = member.client.generate(
      {
        model: ref,
        messages: messages.map((m) => ({ role: chatRoleToPb(m.role), content: m.content })),
        sampling: { ...sampling, seed: BigInt(sampling.seed) },
        cacheBreakpoints: breakpoints,
      },
      { timeoutMs: 120_000, ...(signal ? { signal } : {}) },
    );
    return {
      chunks: (async function* () {
        for await (const piece of stream) {
          if (piece.finishReason !== PbFinishReason.UNSPECIFIED)
            end = {
              finishReason: finishReasonOf(piece.finishReason),
              inputTokens: Number(piece.inputTokens),
              outputTokens: Number(piece.outputTokens),
              cacheReadTokens: Number(piece.cacheReadTokens),
              cacheWriteTokens: Number(piece.cacheWriteTokens),
            };
          if (piece.text) yield piece.text;
        }
      })(),
      done: () => end,
    };
  }

  private choose(ref: { modelId: string; key: string }): FleetMember {
    if (!ref.key) return this.members[this.next++ % this.members.length]!;
    const holders = this.ready.get(ref.modelId);
    if (holders?.size) {
      const ready = this.members.filter((m) => holders.has(m.addr));
      if (ready.length) return ready[this.next++ % ready.length]!;
    }
    return this.owner(ref.modelId);
  }

  /** Rendezvous hashing: the same model lands on the same server while the fleet is unchanged. */
  private owner(modelId: string): FleetMember {
    let best = this.members[0]!;
    let bestScore = -1;
    for (const m of this.members) {
      const score = fnv1a(`${modelId}@${m.addr}`);
      if (score > bestScore) {
        best = m;
        bestScore = score;
      }
    }
    return best;
  }

  private mark(modelId: string, addr: string, ready: boolean): void {
    let set = this.ready.get(modelId);
    if (!set) this.ready.set(modelId, (set = new Set()));
    if (ready) set.add(addr);
    else set.delete(addr);
  }
}
