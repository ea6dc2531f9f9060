/** A model's readiness on this server. */
export type ModelStatus = 'warming' | 'ready' | 'failed';

export interface CacheEntry<M> {
  id: string;
  status: ModelStatus;
  model?: M;
  bytes: number;
  reason?: string;
  /** Pinned entries (built-in base models) are never evicted. */
  pinned: boolean;
  lastUsed: number;
}

/**
 * Which models this server holds, least recently used first out once the
 * byte budget is exceeded. Warming and pinned entries are never evicted.
 */
export class ModelCache<M> {
  private readonly entries = new Map<string, CacheEntry<M>>();
  private tick = 0;

  constructor(private readonly budgetBytes: number) {}

  get budget(): number {
    return this.budgetBytes;
  }

  get(id: string): CacheEntry<M> | undefined {
    const entry = this.entries.get(id);
    if (entry) entry.lastUsed = ++this.tick;
    return entry;
  }

  peek(id: string): CacheEntry<M> | undefined {
    return this.entries.get(id);
  }

  startWarming(id: string, pinned = false): CacheEntry<M> {
    const entry: CacheEntry<M> = { id, status: 'warming', bytes: 0, pinned, lastUsed: ++this.tick };
    this.entries.set(id, entry);
    return entry;
  }

  /** Marks a model ready and evicts others until the budget holds; returns the evicted ids. */
  ready(id: string, model: M, bytes: number): string[] {
    const entry = this.entries.get(id) ?? this.startWarming(id);
    Object.assign(entry, { status: 'ready', model, bytes, reason: undefined, lastUsed: ++this.tick });
    return this.evict(id);
  }

  failed(id: string, reason: string): void {
    const entry = this.entries.get(id) ?? this.startWarming(id);
    Object.assign(entry, { status: 'failed', model: undefined, bytes: 0, reason });
  }

  delete(id: string): void {
    this.entries.delete(id);
  }

  list(): CacheEntry<M>[] {
    return [...this.entries.values()];
  }

  usedBytes(): number {
    let total = 0;
    for (const e of this.entries.values()) total += e.bytes;
    return total;
  }

  private evict(keep: string): string[] {
    const evicted: string[] = [];
    const candidates = [...this.entries.values()]
      .filter((e) => e.id !== keep && !e.pinned && e.status !== 'warming')
      .sort((a, b) => a.lastUsed - b.lastUsed);
    while (this.usedBytes() > this.budgetBytes && candidates.length) {
      const victim = candidates.shift()!;
      this.entries.delete(victim.id);
      evicted.push(victim.id);
    }
    return evicted;
  }
}
