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

export interface FleetOptions {
  /**
   * On how many servers a trained model is placed (its first `replicas` servers by rendezvous hash); a
   * deployment warms on all of them and calls are spread over those that hold it ready. At most the fleet's size.
   */
  replicas?: number;
}

/**
 * The model-servers behind the router. Built-in models (preloaded on every
 * server) go round-robin; a trained model goes to the servers known to hold it
 * ready, else to its rendezvous-hash owner, which starts loading it (425 until
 * ready). States are learned from replies and from a periodic poll. The members
 * may change while it runs (replicas discovered through DNS, see setMembers).
 */
export class GrpcModelFleet implements ModelFleet {
  private readonly ready = new Map<string, Set<string>>();
  private next = 0;
  private poller: NodeJS.Timeout | undefined;
  private members: FleetMember[];
  private readonly replicas: number;

  constructor(members: FleetMember[], options: FleetOptions = {}) {
    if (!members.length) throw new Error('at least one model-server address is needed');
    this.members = members;
    this.replicas = Math.max(1, options.replicas ?? 1);
  }

  /** The servers now in the fleet, by address. */
  addrs(): string[] {
    return this.members.map((m) => m.addr);
  }

  /**
   * Replace the fleet (replicas added or gone). What is known ready on a server that stays is kept; a trained
   * model whose placement moves to a new server is loaded there on its first call (425 until ready).
   */
  setMembers(members: FleetMember[]): void {
    if (!members.length) return;
    const kept = new Set(members.map((m) => m.addr));
    for (const set of this.ready.values()) for (const addr of set) if (!kept.has(addr)) set.delete(addr);
    this.members = members;
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
    const res = await this.onServer(ref, (member) =>
      member.client.extract({
        model: ref,
        texts,
        schemaJson,
        threshold: options.threshold,
        includeConfidence: options.includeConfidence,
        includeSpans: options.includeSpans,
      }),
    );
    return { resultsJson: res.resultsJson, inputTokens: Number(res.inputTokens) };
  }

  async embed(ref: ModelRef, texts: string[]) {
    const res = await this.onServer(ref, (member) => member.client.embed({ model: ref, texts }));
    return {
      vectors: res.embeddings.map((e) => e.values),
      dimensions: res.dimensions,
      inputTokens: Number(res.inputTokens),
    };
  }

  /** A call on a server chosen for the model, which learns from the answer whether that server holds it ready. */
  private async onServer<T>(ref: ModelRef, call: (member: FleetMember) => Promise<T>): Promise<T> {
    const member = this.choose(ref);
    try {
      const res = await call(member);
      if (ref.key) this.mark(ref.modelId, member.addr, true);
      return res;
    } catch (err) {
      if (err instanceof AppError && err.reason === Reasons.MODEL_WARMING) this.mark(ref.modelId, member.addr, false);
      throw err;
    }
  }

  /**
   * Loads the model on every server it is placed on, in parallel, and resolves once all of them hold it ready.
   * Rejects with a reason safe to show users: the model-server's own, or a timeout.
   */
  async warm(ref: ModelRef, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    await Promise.all(this.placement(ref.modelId).map((member) => this.warmOn(member, ref, deadline, timeoutMs)));
  }

  private async warmOn(member: FleetMember, ref: ModelRef, deadline: number, timeoutMs: number): Promise<void> {
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
    const member = this.choose(ref);
    let end: ReturnType<GenerateStream['done']> = {
      finishReason: 'length',
      stopSequence: '',
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
              stopSequence: piece.stopSequence,
              inputTokens: Number(piece.inputTokens),
              outputTokens: Number(piece.outputTokens),
              cacheReadTokens: Number(piece.cacheReadTokens),
              cacheWriteTokens: Number(piece.cacheWriteTokens),
            };
          if (piece.text || piece.logprobs.length || piece.promptLogprobs.length)
            yield { text: piece.text, logprobs: piece.logprobs, promptLogprobs: piece.promptLogprobs };
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
    return this.placement(ref.modelId)[0]!;
  }

  /**
   * The servers a trained model is placed on: the first `replicas` by rendezvous hash, so the same model lands
   * on the same servers while the fleet is unchanged, and a server added or gone moves only its share.
   */
  placement(modelId: string): FleetMember[] {
    return this.members
      .map((m) => ({ m, score: fnv1a(`${modelId}@${m.addr}`) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, this.replicas)
      .map(({ m }) => m);
  }

  private mark(modelId: string, addr: string, ready: boolean): void {
    let set = this.ready.get(modelId);
    if (!set) this.ready.set(modelId, (set = new Set()));
    if (ready) set.add(addr);
    else set.delete(addr);
  }
}
