import type { WordPieceTokenizer } from '../../tokenizers/tokenizer';
import type { BertInput } from './modeling-bert';

/** Texts (or text pairs) tokenized and padded into one batch, as `tokenizers` with padding does. */
export function batchOf(tok: WordPieceTokenizer, texts: ReadonlyArray<string | readonly [string, string]>): BertInput {
  const encs = texts.map((m) => (typeof m === 'string' ? tok.encode(m) : tok.encode(m[0], m[1])));
  const time = Math.max(...encs.map((e) => e.ids.length));
  const ids = new Int32Array(encs.length * time);
  const typeIds = new Int32Array(encs.length * time);
  encs.forEach((e, b) => {
    ids.set(e.ids, b * time);
    typeIds.set(e.typeIds, b * time);
  });
  return { ids, typeIds, lengths: Int32Array.from(encs.map((e) => e.ids.length)), batch: encs.length, time };
}
