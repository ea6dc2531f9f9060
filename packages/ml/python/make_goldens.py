"""Golden outputs of HF `tokenizers` and `transformers` for the TypeScript BERT implementation's tests.

    python make_goldens.py tiny                 # writes ../fixtures/tiny-bert (checkpoint + goldens)
    python make_goldens.py base DIR             # writes ../fixtures/minilm-goldens from the checkpoint in DIR
    python make_goldens.py base DIR --texts F   # the same, with the `text` of each JSONL row of F tokenized too

`tiny` makes a random BertConfig checkpoint with `save_pretrained` (small enough to commit) and a WordPiece
tokenizer trained by `tokenizers` on the fixed texts. `base` writes only the small golden arrays for the real
base, never its weights. Offsets are written as UTF-16 indices (JavaScript string positions).
"""

import json
import sys
from pathlib import Path

import torch
from safetensors.torch import save_file
from tokenizers import Tokenizer
from tokenizers.implementations import BertWordPieceTokenizer
from tokenizers.processors import BertProcessing
from transformers import BertConfig, BertModel

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures"
TEXTS = json.loads((HERE / "tricky_texts.json").read_text(encoding="utf-8"))
MODEL_TEXTS = [
    "Barack Obama visited Paris on Tuesday.",
    "The European Union's GDP grew 2.3% in 2019, said Jean-Claude Juncker.",
    "Héllo Wörld! Crème brûlée at 東京 🤗.",
    "Short one.",
]
PAIRS = [("What is the capital of France?", "Paris is the capital of France.")]


def utf16(text: str, i: int) -> int:
    return len(text[:i].encode("utf-16-le")) // 2


def encode_rows(tok: Tokenizer, texts, pairs):
    tok.no_padding()
    tok.no_truncation()
    rows = []
    for item in list(texts) + [list(p) for p in pairs]:
        text, pair = (item, None) if isinstance(item, str) else item
        enc = tok.encode(text, pair) if pair is not None else tok.encode(text)
        offsets = []
        for (s, e), seq in zip(enc.offsets, enc.sequence_ids):
            src = text if seq in (0, None) else pair
            offsets.append([utf16(src, s), utf16(src, e)])
        rows.append(
            {
                "text": text,
                **({"pair": pair} if pair is not None else {}),
                "ids": enc.ids,
                "tokens": enc.tokens,
                "type_ids": enc.type_ids,
                "offsets": offsets,
            }
        )
    return rows


@torch.no_grad()
def hidden_states(model: BertModel, tok: Tokenizer, texts, pairs):
    """last_hidden_state per input, from one padded batch with an attention mask (so masking is tested)."""
    tok.no_truncation()
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    items = tok.encode_batch(list(texts) + [tuple(p) for p in pairs])
    ids = torch.tensor([e.ids for e in items])
    mask = torch.tensor([e.attention_mask for e in items])
    types = torch.tensor([e.type_ids for e in items])
    out = model(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state
    tok.no_padding()
    return {f"hidden.{i}": out[i, : int(mask[i].sum())].contiguous() for i in range(len(items))}


def write(dir_: Path, rows, hidden, model_rows):
    dir_.mkdir(parents=True, exist_ok=True)
    line = lambda v: json.dumps(v, ensure_ascii=False)  # noqa: E731
    body = ",\n".join(line(r) for r in rows)
    text = '{"model": ' + line(model_rows) + ',\n"tokenizer": [\n' + body + "\n]}\n"
    (dir_ / "goldens.json").write_text(text, encoding="utf-8")
    save_file(hidden, str(dir_ / "goldens.safetensors"))


def tiny():
    out = FIXTURES / "tiny-bert"
    wp = BertWordPieceTokenizer(lowercase=False, strip_accents=True, clean_text=True, handle_chinese_chars=True)
    wp.train_from_iterator(TEXTS + MODEL_TEXTS + [a + " " + b for a, b in PAIRS], vocab_size=300, min_frequency=1)
    out.mkdir(parents=True, exist_ok=True)
    # A trained BertWordPieceTokenizer has no post-processor until given one: BERT's, so that path is tested too.
    wp.post_processor = BertProcessing(("[SEP]", wp.token_to_id("[SEP]")), ("[CLS]", wp.token_to_id("[CLS]")))
    wp.save(str(out / "tokenizer.json"))
    tok = Tokenizer.from_file(str(out / "tokenizer.json"))
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=48,
        max_position_embeddings=64,
        type_vocab_size=2,
        initializer_range=0.3,
    )
    model = BertModel(config).eval()
    # Random LayerNorm gains and biases too, so a swapped or missing one shows in the outputs.
    for name, p in model.named_parameters():
        if "LayerNorm" in name or name.endswith(".bias"):
            p.data.add_(torch.randn_like(p) * 0.2)
    model.save_pretrained(str(out))
    rows = encode_rows(tok, TEXTS, PAIRS)
    write(out, rows, hidden_states(model, tok, MODEL_TEXTS, PAIRS), MODEL_TEXTS + [list(p) for p in PAIRS])


def base(path: str, texts_file: str | None):
    tok = Tokenizer.from_file(str(Path(path) / "tokenizer.json"))
    model = BertModel.from_pretrained(path).eval()
    texts = list(TEXTS)
    if texts_file:
        for line in Path(texts_file).read_text(encoding="utf-8").splitlines():
            if line.strip():
                texts.append(json.loads(line)["text"])
    rows = encode_rows(tok, texts, PAIRS)
    write(FIXTURES / "minilm-goldens", rows, hidden_states(model, tok, MODEL_TEXTS, PAIRS), MODEL_TEXTS + [list(p) for p in PAIRS])


if __name__ == "__main__":
    if sys.argv[1:2] == ["tiny"]:
        tiny()
    elif sys.argv[1:2] == ["base"] and len(sys.argv) >= 3:
        extra = sys.argv[sys.argv.index("--texts") + 1] if "--texts" in sys.argv else None
        base(sys.argv[2], extra)
    else:
        sys.exit(__doc__)
