import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadBertCheckpoint } from '../../checkpoints/load';
import { readSafetensors } from '../../checkpoints/safetensors';
import { WordPieceTokenizer } from '../../tokenizers/tokenizer';
import type { BertModel } from './modeling-bert';
import { resolveBaseDir } from '../../checkpoints/sources';

/**
 * The TypeScript BERT against `transformers` and `tokenizers` (goldens written by packages/ml/python/make_goldens.py):
 * token ids, tokens and offsets identical; last hidden states within 1e-4.
 */
const FIXTURES = join(__dirname, '../../../fixtures');

interface TokenRow {
  text: string;
  pair?: string;
  ids: number[];
  tokens: string[];
  type_ids: number[];
  offsets: Array<[number, number]>;
}
interface Goldens {
  tokenizer: TokenRow[];
  model: Array<string | [string, string]>;
}

function readGoldens(dir: string): { goldens: Goldens; hidden: ReturnType<typeof readSafetensors>['tensors'] } {
  return {
    goldens: JSON.parse(readFileSync(join(dir, 'goldens.json'), 'utf8')) as Goldens,
    hidden: readSafetensors(join(dir, 'goldens.safetensors')).tensors,
  };
}

function checkTokenizer(tok: WordPieceTokenizer, rows: TokenRow[]): void {
  for (const row of rows) {
    const e = tok.encode(row.text, row.pair);
    expect({ text: row.text, ids: Array.from(e.ids) }).toEqual({ text: row.text, ids: row.ids });
    expect(e.tokens).toEqual(row.tokens);
    expect(Array.from(e.typeIds)).toEqual(row.type_ids);
    expect(e.offsets).toEqual(row.offsets);
  }
}

/** Runs the model on the golden inputs as one padded batch and returns the largest difference. */
function maxHiddenDiff(model: BertModel, tok: WordPieceTokenizer, g: ReturnType<typeof readGoldens>): number {
  const encs = g.goldens.model.map((m) => (typeof m === 'string' ? tok.encode(m) : tok.encode(m[0], m[1])));
  const time = Math.max(...encs.map((e) => e.ids.length));
  const ids = new Int32Array(encs.length * time);
  const types = new Int32Array(encs.length * time);
  encs.forEach((e, b) => {
    ids.set(e.ids, b * time);
    types.set(e.typeIds, b * time);
  });
  const lengths = Int32Array.from(encs.map((e) => e.ids.length));
  const out = model.forward({ ids, typeIds: types, lengths, batch: encs.length, time });
  const H = model.config.hidden_size;
  let worst = 0;
  encs.forEach((e, b) => {
    const want = g.hidden.get(`hidden.${b}`)!;
    expect(want.shape).toEqual([e.ids.length, H]);
    for (let i = 0; i < want.data.length; i++)
      worst = Math.max(worst, Math.abs(out.data[b * time * H + i]! - want.data[i]!));
  });
  return worst;
}

describe('BERT against transformers', () => {
  it('a tiny random BertConfig checkpoint (save_pretrained): ids, offsets and hidden states', () => {
    const dir = join(FIXTURES, 'tiny-bert');
    const ckpt = loadBertCheckpoint(dir);
    const g = readGoldens(dir);
    checkTokenizer(ckpt.tokenizer, g.goldens.tokenizer);
    expect(maxHiddenDiff(ckpt.model, ckpt.tokenizer, g)).toBeLessThanOrEqual(1e-4);
  });

  const base = resolveBaseDir();
  // `pnpm install` fetches the base; CI must have it, elsewhere the test waits for `pnpm --filter @whetstone/ml fetch:base`.
  const real = (base && existsSync(join(base, 'model.safetensors'))) || process.env.CI ? it : it.skip;
  real('the installed base (all-MiniLM-L6-v2): ids, offsets and hidden states', () => {
    if (!base) throw new Error('the base is not installed: run `pnpm --filter @whetstone/ml fetch:base`');
    const ckpt = loadBertCheckpoint(base);
    const g = readGoldens(join(FIXTURES, 'minilm-goldens'));
    checkTokenizer(ckpt.tokenizer, g.goldens.tokenizer);
    expect(maxHiddenDiff(ckpt.model, ckpt.tokenizer, g)).toBeLessThanOrEqual(1e-4);
  });
});
