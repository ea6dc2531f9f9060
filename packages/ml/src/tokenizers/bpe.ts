/**
 * The BPE model of HF `tokenizers` on one pre-tokenized word: its chars are the first symbols (a char missing
 * from the vocabulary becomes its UTF-8 bytes as `<0xXX>` tokens with `byte_fallback`, else the unknown token,
 * consecutive ones fused with `fuse_unk`, else it is dropped), then the adjacent pair of lowest merge rank is
 * merged, the leftmost first on a tie, until no pair has a rank. With `ignore_merges` a word that is a token
 * of its own is that token.
 */
export interface BpeModelJson {
  type: 'BPE';
  vocab: Record<string, number>;
  merges: Array<string | [string, string]>;
  unk_token?: string | null;
  continuing_subword_prefix?: string | null;
  end_of_word_suffix?: string | null;
  fuse_unk?: boolean;
  byte_fallback?: boolean;
  ignore_merges?: boolean;
  dropout?: number | null;
}

export class BpeModel {
  readonly vocab: Map<string, number>;
  private readonly ranks = new Map<string, number>();
  private readonly cache = new Map<string, number[]>();
  private readonly unk: number | undefined;

  constructor(private readonly json: BpeModelJson) {
    this.vocab = new Map(Object.entries(json.vocab));
    json.merges.forEach((m, rank) => {
      const [a, b] = typeof m === 'string' ? splitMerge(m) : m;
      // tokenizers refuses a merge whose result is not a token; such a merge never applies here.
      if (this.vocab.has(a + b)) this.ranks.set(pairKey(a, b), rank);
    });
    this.unk = json.unk_token == null ? undefined : this.vocab.get(json.unk_token);
  }

  /** The ids of one word. */
  word(text: string): number[] {
    const hit = this.cache.get(text);
    if (hit) return hit;
    const ids = this.merge(text);
    if (this.cache.size < 100_000) this.cache.set(text, ids);
    return ids;
  }

  private symbols(text: string): string[] {
    const out: string[] = [];
    let lastUnk = false;
    for (const c of text) {
      if (this.vocab.has(c)) {
        out.push(c);
        lastUnk = false;
        continue;
      }
      if (this.json.byte_fallback) {
        const bytes = [...new TextEncoder().encode(c)].map(
          (b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`,
        );
        if (bytes.every((b) => this.vocab.has(b))) {
          out.push(...bytes);
          lastUnk = false;
          continue;
        }
      }
      if (this.unk === undefined) continue;
      if (!(this.json.fuse_unk && lastUnk)) out.push(this.json.unk_token!);
      lastUnk = true;
    }
    return out;
  }

  private merge(text: string): number[] {
    if (this.json.ignore_merges) {
      const id = this.vocab.get(text);
      if (id !== undefined) return [id];
    }
    const s = this.symbols(text);
    for (;;) {
      let best = -1;
      let bestRank = Infinity;
      for (let i = 0; i + 1 < s.length; i++) {
        const r = this.ranks.get(pairKey(s[i]!, s[i + 1]!));
        if (r !== undefined && r < bestRank) {
          bestRank = r;
          best = i;
        }
      }
      if (best < 0) break;
      s.splice(best, 2, s[best]! + s[best + 1]!);
    }
    return s.map((t) => this.vocab.get(t)!);
  }
}

function pairKey(a: string, b: string): string {
  return `${a}\u0000${b}`;
}

function splitMerge(m: string): [string, string] {
  const i = m.indexOf(' ');
  if (i < 0 || m.indexOf(' ', i + 1) >= 0) throw new Error(`BPE: merge ${JSON.stringify(m)} is not two tokens`);
  return [m.slice(0, i), m.slice(i + 1)];
}

/** GPT-2's bytes_to_unicode: every byte as a printable char (the byte-level alphabet). */
export const BYTE_TO_CHAR: readonly string[] = (() => {
  const keep: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) keep.push(b);
  for (let b = 0xa1; b <= 0xac; b++) keep.push(b);
  for (let b = 0xae; b <= 0xff; b++) keep.push(b);
  const out: string[] = new Array<string>(256);
  let n = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCodePoint(keep.includes(b) ? b : 256 + n++);
  return out;
})();

export const CHAR_TO_BYTE: ReadonlyMap<string, number> = new Map(BYTE_TO_CHAR.map((c, b) => [c, b]));

/** The text's UTF-8 bytes as byte-level chars. */
export function toByteLevel(text: string): string {
  let out = '';
  for (const b of new TextEncoder().encode(text)) out += BYTE_TO_CHAR[b]!;
  return out;
}
