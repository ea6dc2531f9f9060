export interface WordPieceModel {
  vocab: ReadonlyMap<string, number>;
  unk_token: string;
  continuing_subword_prefix: string;
  max_input_chars_per_word: number;
}

export interface WordPieceToken {
  id: number;
  token: string;
  /** [from, to) over the word's chars. */
  from: number;
  to: number;
}

/**
 * tokenizers' WordPiece on one pre-tokenized word (code points): greedy longest-match-first, pieces after the
 * first looked up with the continuing prefix; a word longer than `max_input_chars_per_word`, or one with a part
 * no piece matches, is a single unknown token spanning the whole word.
 */
export function wordPiece(chars: readonly string[], m: WordPieceModel): WordPieceToken[] {
  const unk = (): WordPieceToken[] => {
    const id = m.vocab.get(m.unk_token);
    if (id === undefined) throw new Error(`WordPiece: the unknown token ${m.unk_token} is not in the vocabulary`);
    return [{ id, token: m.unk_token, from: 0, to: chars.length }];
  };
  if (chars.length > m.max_input_chars_per_word) return unk();
  const out: WordPieceToken[] = [];
  let start = 0;
  while (start < chars.length) {
    let end = chars.length;
    let found: WordPieceToken | null = null;
    while (start < end) {
      let piece = chars.slice(start, end).join('');
      if (start > 0) piece = m.continuing_subword_prefix + piece;
      const id = m.vocab.get(piece);
      if (id !== undefined) {
        found = { id, token: piece, from: start, to: end };
        break;
      }
      end--;
    }
    if (!found) return unk();
    out.push(found);
    start = end;
  }
  return out;
}
