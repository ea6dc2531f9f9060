import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { DecoderConfig, Weights } from './model';
import { type BaseMeta, decodeWeights } from './weights-file';

export interface DecoderBase {
  meta: BaseMeta;
  config: DecoderConfig;
  weights: Weights;
}

let cached: DecoderBase | undefined;

/** whetstone-decoder-base: the committed pretrained weights (scripts/build-decoder.ts), loaded once, frozen. */
export function loadDecoderBase(): DecoderBase {
  if (cached) return cached;
  const { meta, weights } = decodeWeights(readFileSync(path.resolve(__dirname, '../../assets/decoder-base.bin')));
  cached = { meta, config: meta.config, weights };
  return cached;
}
