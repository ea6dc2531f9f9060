"""A LoRA adapter trained by Whetstone (fixtures/tiny-bert-lora, written by scripts/make-lora-fixture.ts) loads in
HF `peft` on the tiny checkpoint and gives the hidden states Whetstone computed, unmerged and merged.

    python -m pytest test_peft_roundtrip.py      (or: python test_peft_roundtrip.py)
"""

import json
from pathlib import Path

import torch
from peft import PeftModel
from safetensors.torch import load_file
from tokenizers import Tokenizer
from transformers import BertModel

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@torch.no_grad()
def test_whetstone_adapter_in_peft():
    base_dir = FIXTURES / "tiny-bert"
    texts = json.loads((base_dir / "goldens.json").read_text(encoding="utf-8"))["model"]
    tok = Tokenizer.from_file(str(base_dir / "tokenizer.json"))
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    encs = tok.encode_batch([t if isinstance(t, str) else tuple(t) for t in texts])
    ids = torch.tensor([e.ids for e in encs])
    mask = torch.tensor([e.attention_mask for e in encs])
    types = torch.tensor([e.type_ids for e in encs])
    expected = load_file(str(FIXTURES / "tiny-bert-lora" / "expected.safetensors"))
    model = PeftModel.from_pretrained(BertModel.from_pretrained(str(base_dir)).eval(), str(FIXTURES / "tiny-bert-lora")).eval()
    for merged in (False, True):
        m = model.merge_and_unload() if merged else model
        out = m(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state
        for i in range(len(encs)):
            n = int(mask[i].sum())
            diff = (out[i, :n] - expected[f"hidden.{i}"]).abs().max().item()
            assert diff <= 1e-4, f"text {i} (merged={merged}): max abs diff {diff}"
    print("peft round trip: ok")


if __name__ == "__main__":
    test_whetstone_adapter_in_peft()
