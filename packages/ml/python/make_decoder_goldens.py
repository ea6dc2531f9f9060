"""Golden outputs of HF `tokenizers` and `transformers` for the TypeScript Llama-family decoders' tests.

    python make_decoder_goldens.py      # writes ../fixtures/tiny-llama*, ../fixtures/tiny-qwen2 and ../fixtures/bpe-*

Each tiny checkpoint is a random LlamaConfig or Qwen2Config model written with `save_pretrained` (small enough to
commit) with a byte-level BPE tokenizer trained by `tokenizers` on the fixed texts: one pre-tokenized as SmolLM2's
(Digits, then ByteLevel with the GPT-2 regex) with a BOS template, one as Qwen2's and Llama 3's (NFC, a Split on
their regex, then ByteLevel without a regex), and for the tokenizer tests alone one laid out as Llama 2's (a
Prepend/Replace normalizer, BPE with byte fallback, the Replace/ByteFallback/Fuse/Strip decoder). goldens.json holds the token ids of the tricky texts and of the model
inputs and their greedy continuations decoded one token at a time with the model's KV cache; goldens.safetensors
the logits of every position of each model input (`logits.i`) and of each cached decoding step (`steps.i`).
"""

import json
from pathlib import Path

import torch
from safetensors.torch import save_file
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from tokenizers.trainers import BpeTrainer
from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures"
TEXTS = json.loads((HERE / "tricky_texts.json").read_text(encoding="utf-8"))
BPE_TEXTS = TEXTS + [
    "Numbers 1234567 and 3.14159, 2024-06-01, 1,000,000 and ١٢٣ ½.",
    "Whitespace   runs\n\n\n  indented\n\tcode() {\n    return x;\n}\n",
    "I'm sure they'll say it's fine; WE'RE DONE. You've got it, I'd say.",
    "<|im_start|>user\nHello there!<|im_end|>\n<|im_start|>assistant\nHi!<|im_end|>",
    "trailing spaces   ",
    " leading space and <|endoftext|> in the middle<|endoftext|>",
    "tokens <tool> and<tool>glued",
]
MODEL_TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "Numbers 1234567 and émojis 🤗 in one line.\n",
    "<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n",
    "a",
]
QWEN_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def bpe_tokenizer(kind: str) -> Tokenizer:
    tok = Tokenizer(models.BPE(ignore_merges=kind == "llama3"))
    if kind == "smollm":
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
        )
    else:
        tok.normalizer = normalizers.NFC()
        pattern = QWEN_PATTERN if kind == "qwen2" else LLAMA3_PATTERN
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    tok.decoder = decoders.ByteLevel()
    trainer = BpeTrainer(
        vocab_size=500,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(BPE_TEXTS * 3, trainer)
    # A non-special added token that strips the space before it.
    tok.add_tokens([AddedToken("<tool>", lstrip=True, special=False, normalized=False)])
    if kind == "smollm":
        tok.post_processor = processors.TemplateProcessing(
            single="<|endoftext|> $A", pair="<|endoftext|> $A <|endoftext|> $B", special_tokens=[("<|endoftext|>", 0)]
        )
    else:
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
    return tok


def byte_fallback_tokenizer() -> Tokenizer:
    """Llama 2's layout: Prepend/Replace to "▁", no pre-tokenizer, BPE with `<0xXX>` byte tokens for unseen chars."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    trainer = BpeTrainer(vocab_size=300, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False)
    # Train on ASCII-only text, so every other char falls back to bytes.
    ascii_texts = ["".join(c for c in t if ord(c) < 128) for t in BPE_TEXTS]
    tok.train_from_iterator([t.replace(" ", "▁") for t in ascii_texts] * 3, trainer)
    data = json.loads(tok.to_str())
    vocab = data["model"]["vocab"]
    for b in range(256):
        vocab.setdefault(f"<0x{b:02X}>", len(vocab))
    data["model"]["vocab"] = vocab
    data["decoder"] = {
        "type": "Sequence",
        "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "ByteFallback"},
            {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0},
        ],
    }
    data["post_processor"] = json.loads(
        processors.TemplateProcessing(single="<s> $A", pair="<s> $A </s> $B", special_tokens=[("<s>", 1), ("</s>", 2)]).__getstate__()
    )
    return Tokenizer.from_str(json.dumps(data))


def rows(tok: Tokenizer, texts):
    out = []
    for text in texts:
        enc = tok.encode(text)
        plain = tok.encode(text, add_special_tokens=False)
        out.append(
            {
                "text": text,
                "ids": enc.ids,
                "tokens": enc.tokens,
                "ids_no_special": plain.ids,
                "decoded": tok.decode(enc.ids, skip_special_tokens=False),
            }
        )
    return out


def write_json(path: Path, value) -> None:
    line = lambda v: json.dumps(v, ensure_ascii=False)  # noqa: E731
    if isinstance(value, dict):
        body = ",\n".join(f"{line(k)}: {line(v)}" for k, v in value.items())
        path.write_text("{\n" + body + "\n}\n", encoding="utf-8")
    else:
        path.write_text(line(value) + "\n", encoding="utf-8")


def perturb(model) -> None:
    """Random norm gains and biases, so a swapped or missing one shows in the logits."""
    for name, p in model.named_parameters():
        if name.endswith("norm.weight") or name.endswith(".bias"):
            p.data.add_(torch.randn_like(p) * 0.3)


def reset_rope(model) -> None:
    """`dynamic` rotary keeps the frequencies of the longest sequence it has seen: start each input afresh."""
    rope = model.model.rotary_emb
    rope.register_buffer("inv_freq", rope.original_inv_freq.clone(), persistent=False)
    rope.max_seq_len_cached = rope.original_max_seq_len


@torch.no_grad()
def greedy_with_cache(model, x, n: int):
    """Greedy continuation fed one token at a time through the model's DynamicCache, and the logits of each step.

    (Not `generate`: its default logits processing picks other tokens than the argmax on these random models.)
    """
    out = model(input_ids=x, use_cache=True)
    cache, last = out.past_key_values, out.logits[0, -1]
    ids, steps = [], []
    for _ in range(n):
        ids.append(int(last.argmax()))
        out = model(input_ids=torch.tensor([[ids[-1]]]), past_key_values=cache, use_cache=True)
        cache, last = out.past_key_values, out.logits[0, -1]
        steps.append(last)
    return ids, torch.stack(steps).contiguous()


@torch.no_grad()
def checkpoint(name: str, tok: Tokenizer, config, cls) -> None:
    out = FIXTURES / name
    out.mkdir(parents=True, exist_ok=True)
    tok.save(str(out / "tokenizer.json"))
    torch.manual_seed(0)
    model = cls(config).eval()
    perturb(model)
    model.save_pretrained(str(out))
    logits = {}
    inputs = []
    for i, text in enumerate(MODEL_TEXTS):
        ids = tok.encode(text).ids
        x = torch.tensor([ids])
        reset_rope(model)
        logits[f"logits.{i}"] = model(input_ids=x).logits[0].contiguous()
        reset_rope(model)
        greedy, steps = greedy_with_cache(model, x, 12)
        if i < 2:
            logits[f"steps.{i}"] = steps
        inputs.append({"text": text, "ids": ids, "greedy": greedy})
    write_json(out / "goldens.json", {"inputs": inputs})
    save_file(logits, str(out / "goldens.safetensors"))


def main() -> None:
    toks = {kind: bpe_tokenizer(kind) for kind in ("smollm", "qwen2", "llama3")}
    toks["bytefallback"] = byte_fallback_tokenizer()
    for kind, tok in toks.items():
        d = FIXTURES / f"bpe-{kind}"
        d.mkdir(parents=True, exist_ok=True)
        tok.save(str(d / "tokenizer.json"))
        write_json(d / "goldens.json", rows(Tokenizer.from_file(str(d / "tokenizer.json")), BPE_TEXTS))
    smol, qwen = toks["smollm"], toks["qwen2"]
    common = dict(
        vocab_size=smol.get_vocab_size(),
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        initializer_range=0.3,
        bos_token_id=0,
        eos_token_id=0,
    )
    llama3 = {"rope_type": "llama3", "rope_theta": 10000.0, "factor": 8.0, "low_freq_factor": 1.0}
    llama3 |= {"high_freq_factor": 4.0, "original_max_position_embeddings": 16}
    checkpoint(
        "tiny-llama",
        smol,
        LlamaConfig(**common, max_position_embeddings=64, tie_word_embeddings=True, rope_parameters=llama3),
        LlamaForCausalLM,
    )
    checkpoint(
        "tiny-llama-linear",
        smol,
        LlamaConfig(
            **common | {"num_key_value_heads": 4},
            max_position_embeddings=64,
            tie_word_embeddings=False,
            attention_bias=True,
            mlp_bias=True,
            rope_parameters={"rope_type": "linear", "rope_theta": 500.0, "factor": 2.0},
        ),
        LlamaForCausalLM,
    )
    checkpoint(
        "tiny-llama-dynamic",
        smol,
        LlamaConfig(
            **common | {"num_key_value_heads": 1},
            max_position_embeddings=8,
            tie_word_embeddings=True,
            rope_parameters={"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0},
        ),
        LlamaForCausalLM,
    )
    checkpoint(
        "tiny-qwen2",
        qwen,
        Qwen2Config(
            **common | {"vocab_size": qwen.get_vocab_size()},
            max_position_embeddings=64,
            tie_word_embeddings=False,
            use_sliding_window=True,
            sliding_window=6,
            max_window_layers=1,
            rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
        ),
        Qwen2ForCausalLM,
    )


if __name__ == "__main__":
    main()
