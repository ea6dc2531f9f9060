import { loadGlove } from '../assets/load';
import { loadEncoderBase } from '../encoder/base';
import { PRETRAINED_NAME_LABELS } from '../encoder/pretrain';
import { EntityEncoder } from '../encoder/train';
import { zeroShotSpans, type ZeroShotSpan } from './entities';

let encoder: EntityEncoder | undefined;
/** The pretrained encoder base with no trained labels: its label-name head answers any label name. */
function baseEncoder(): EntityEncoder {
  if (!encoder) {
    const { config, weights } = loadEncoderBase();
    encoder = new EntityEncoder(config, loadGlove(), weights, null, []);
  }
  return encoder;
}

/** Embeddings of the pretrained base: its words' GloVe mean only (see EntityEncoder.embedMany, state weight 0). */
export function baseEmbeddings(texts: readonly string[]): Float32Array[] {
  return baseEncoder().embedMany(texts, 0);
}

/** Whether the zero-shot base answers a label from the pretrained encoder (a named-entity type it was taught). */
export function answeredByEncoder(label: string): boolean {
  return PRETRAINED_NAME_LABELS.has(label.trim().toLowerCase());
}

/**
 * The zero-shot base's entities for label names given at request time, for
 * several texts: labels the encoder base was pretrained on (people, places,
 * organisations, nationalities under their usual names; distant supervision
 * on real English, docs/ml-assets.md) come from its label-name head in one
 * batched pass; every other label from patterns, compromise, WordNet and
 * GloVe ({@link zeroShotSpans}), where it does not overlap an encoder span.
 * A text in which the encoder finds none of the named labels is answered by
 * the rules alone (on wikigold dev F1 0.620 against 0.627 for the encoder
 * alone, and a bare name without context is still found).
 * Chosen on wikigold dev (docs/ml-assets.md): the encoder alone scored F1
 * 0.656 there against 0.473 for the rules and 0.61 for "the more confident
 * span wins" or for adding the rules' non-overlapping spans.
 */
export function baseEntitiesMany(
  texts: readonly string[],
  labels: readonly string[],
  threshold: number,
): ZeroShotSpan[][] {
  const named = labels.filter(answeredByEncoder);
  const others = labels.filter((l) => !answeredByEncoder(l));
  const fromEncoder = named.length ? baseEncoder().extractMany(texts, named, threshold) : texts.map(() => []);
  return texts.map((text, i) => {
    // A text in which the encoder finds no name at all (a bare "Ada Lovelace", a short query: it learned names
    // in context) gets the rules for every label.
    if (named.length && !fromEncoder[i]!.length) return zeroShotSpans(text, [...labels], threshold);
    const mine = withAbbreviations(text, fromEncoder[i]!);
    const rest = others.length
      ? zeroShotSpans(text, others, threshold).filter((z) => !mine.some((m) => z.start < m.end && z.end > m.start))
      : [];
    return [...mine, ...rest].sort((a, b) => a.start - b.start);
  });
}

/** Place-name abbreviations that begin a name: "Mt. Everest", "St. Louis", "Ft. Worth". */
const NAME_PREFIX = /^(?:Mt|Mts|St|Ste|Ft|Pt)$/;
/** Abbreviations that end a name: "Apple Inc.", "Martin Luther King Jr.". */
const NAME_SUFFIX = /\b(?:Inc|Corp|Co|Ltd|Bros|Jr|Sr)$/;
/** The period of a name prefix, then the capitalised words of the rest of the name. */
const AFTER_PREFIX = /^\.\s+\p{Lu}[\p{L}'’-]*(?:\s+\p{Lu}[\p{L}'’-]*)*/u;

/**
 * The encoder's spans with abbreviated names made whole. The tokenizer splits "St. Louis" at its period, and the
 * encoder then answers "St" as a place (and "Louis" as a person): a span that is a name prefix followed by its
 * period and capitalised words takes them in (and the spans it covers go), and a span that ends in a company
 * or generational suffix takes its period.
 */
export function withAbbreviations(text: string, spans: readonly ZeroShotSpan[]): ZeroShotSpan[] {
  const out: ZeroShotSpan[] = [];
  for (const s of [...spans].sort((a, b) => a.start - b.start)) {
    if (out.some((o) => s.start < o.end && s.end > o.start)) continue;
    let end = s.end;
    const rest = NAME_PREFIX.test(s.text) ? AFTER_PREFIX.exec(text.slice(end)) : null;
    if (rest) end += rest[0].length;
    else if (NAME_SUFFIX.test(s.text) && text[end] === '.') end += 1;
    out.push(end === s.end ? s : { ...s, end, text: text.slice(s.start, end) });
  }
  return out;
}

/** {@link baseEntitiesMany} for one text. */
export function baseEntities(text: string, labels: readonly string[], threshold: number): ZeroShotSpan[] {
  return baseEntitiesMany([text], labels, threshold)[0]!;
}
