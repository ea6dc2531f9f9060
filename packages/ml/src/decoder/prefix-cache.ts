import { createHash } from 'node:crypto';
import type { KvSnapshot } from './model';

/** Limits of a prefix cache. */
export interface PrefixCacheOptions {
  /** Bytes of attention state (and the token ids keying it) held at most; least recently used entries go first. */
  maxBytes: number;
  /** Seconds an entry lives after its last use when its breakpoint names none. */
  defaultTtlSeconds: number;
  /** Breakpoints whose prefix has fewer prompt tokens than this are ignored: too short to be worth an entry. */
  minPrefixTokens: number;
  /** Milliseconds now; tests move it. */
  now?: () => number;
}

/** Counters and levels of a prefix cache, for metrics. */
export interface PrefixCacheStats {
  /** Calls with cacheable breakpoints that started from a cached prefix. */
  hits: number;
  /** Calls with cacheable breakpoints that found none of them cached. */
  misses: number;
  /** Entries dropped to stay within `maxBytes`. */
  evictions: number;
  /** Entries dropped after their time to live. */
  expirations: number;
  bytes: number;
  entries: number;
}

/** A prefix a call may read from or write to the cache: its length in prompt tokens and its time to live. */
export interface CachePoint {
  tokens: number;
  ttlSeconds: number;
}

interface Entry {
  identity: string;
  tokens: Int32Array;
  state: KvSnapshot;
  bytes: number;
  ttlMs: number;
  lastUsed: number;
}

/** Bytes of an entry beyond its arrays: key string, map slot, object headers (an estimate). */
const ENTRY_OVERHEAD_BYTES = 256;

/**
 * Decoder attention state keyed by (decoder identity, exact prompt prefix): a
 * bounded LRU by bytes whose entries expire after a time to live without use.
 * The key is a SHA-256 of the identity and token ids, and a hit also compares
 * the stored token ids, so a collision can never serve another prefix's state.
 */
export class PrefixCache {
  readonly minPrefixTokens: number;
  readonly defaultTtlSeconds: number;
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;
  private held = 0;
  private readonly counts = { hits: 0, misses: 0, evictions: 0, expirations: 0 };

  constructor(private readonly options: PrefixCacheOptions) {
    this.minPrefixTokens = options.minPrefixTokens;
    this.defaultTtlSeconds = options.defaultTtlSeconds;
    this.now = options.now ?? Date.now;
  }

  /**
   * The longest of `points` whose prefix of `prompt` is cached for `identity`,
   * counted as one hit, or undefined, counted as one miss. A hit renews the
   * entry's time to live (with the point's own when it names one).
   */
  find(
    identity: string,
    prompt: readonly number[],
    points: readonly CachePoint[],
  ): { tokens: number; state: KvSnapshot } | undefined {
    this.sweep();
    const longestFirst = [...points].sort((a, b) => b.tokens - a.tokens);
    for (const point of longestFirst) {
      const key = keyOf(identity, prompt, point.tokens);
      const entry = this.entries.get(key);
      if (!entry || entry.identity !== identity || !samePrefix(entry.tokens, prompt)) continue;
      this.entries.delete(key);
      entry.lastUsed = this.now();
      entry.ttlMs = this.ttlMs(point.ttlSeconds);
      this.entries.set(key, entry);
      this.counts.hits++;
      return { tokens: point.tokens, state: entry.state };
    }
    this.counts.misses++;
    return undefined;
  }

  /** Stores the state after the first `state.length` tokens of `prompt`; false when it alone exceeds the size limit. */
  store(identity: string, prompt: readonly number[], state: KvSnapshot, ttlSeconds: number): boolean {
    const tokens = Int32Array.from(prompt.slice(0, state.length));
    const bytes =
      tokens.byteLength +
      state.keys.reduce((n, k) => n + k.byteLength, 0) +
      state.values.reduce((n, v) => n + v.byteLength, 0) +
      ENTRY_OVERHEAD_BYTES;
    if (bytes > this.options.maxBytes) return false;
    const key = keyOf(identity, prompt, state.length);
    this.remove(key);
    this.sweep();
    for (const [oldest] of this.entries) {
      if (this.held + bytes <= this.options.maxBytes) break;
      this.remove(oldest);
      this.counts.evictions++;
    }
    this.entries.set(key, { identity, tokens, state, bytes, ttlMs: this.ttlMs(ttlSeconds), lastUsed: this.now() });
    this.held += bytes;
    return true;
  }

  stats(): PrefixCacheStats {
    this.sweep();
    return { ...this.counts, bytes: this.held, entries: this.entries.size };
  }

  private ttlMs(seconds: number): number {
    return 1000 * (seconds > 0 ? seconds : this.options.defaultTtlSeconds);
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) {
      if (now - entry.lastUsed < entry.ttlMs) continue;
      this.remove(key);
      this.counts.expirations++;
    }
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.held -= entry.bytes;
  }
}

function keyOf(identity: string, prompt: readonly number[], length: number): string {
  const ids = Int32Array.from(prompt.slice(0, length));
  return createHash('sha256')
    .update(identity)
    .update('\0')
    .update(Buffer.from(ids.buffer, ids.byteOffset, ids.byteLength))
    .digest('base64');
}

function samePrefix(stored: Int32Array, prompt: readonly number[]): boolean {
  if (stored.length > prompt.length) return false;
  for (let i = 0; i < stored.length; i++) if (stored[i] !== prompt[i]) return false;
  return true;
}
