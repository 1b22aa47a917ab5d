"""Write a tiny random Llama model into a folder that already holds its `tokenizer.json`.

Run by `tests/vllm/environment.py` with the vLLM venv's interpreter (its torch and transformers):
`python tiny_model.py FOLDER`. The weights are seeded, so the same versions give the same model.
The vocabulary covers every id of the folder's tokenizer; begin/end of sentence are the DeepSeek
V4 tokenizer's. Its text is noise: what the tests check is everything around it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM

BOS_TOKEN = "<｜begin▁of▁sentence｜>"
EOS_TOKEN = "<｜end▁of▁sentence｜>"
MAX_POSITIONS = 131_072
SEED = 20_261_201


def vocabulary_size(tokenizer: dict[str, object]) -> int:
    """One more than the largest id the tokenizer defines."""
    model = tokenizer["model"]
    assert isinstance(model, dict)
    ids = list(model["vocab"].values())
    ids += [token["id"] for token in tokenizer.get("added_tokens", [])]  # type: ignore[union-attr]
    return max(ids) + 1


def token_id(tokenizer: dict[str, object], content: str) -> int:
    """The id of an added (special) token."""
    for token in tokenizer.get("added_tokens", []):  # type: ignore[union-attr]
        if token["content"] == content:
            return token["id"]
    raise KeyError(content)


def write_model(folder: Path) -> None:
    """Save the seeded model, its generation config and the tokenizer config into `folder`."""
    tokenizer = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    bos, eos = token_id(tokenizer, BOS_TOKEN), token_id(tokenizer, EOS_TOKEN)
    config = LlamaConfig(
        vocab_size=vocabulary_size(tokenizer),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=MAX_POSITIONS,
        tie_word_embeddings=True,
        bos_token_id=bos,
        eos_token_id=eos,
        pad_token_id=eos,
        torch_dtype="float32",
    )
    torch.manual_seed(SEED)
    model = LlamaForCausalLM(config)
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer_config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "add_bos_token": False,
        "add_eos_token": False,
        "bos_token": BOS_TOKEN,
        "eos_token": EOS_TOKEN,
        "pad_token": EOS_TOKEN,
        "clean_up_tokenization_spaces": False,
        "model_max_length": MAX_POSITIONS,
    }
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2))


if __name__ == "__main__":
    write_model(Path(sys.argv[1]))
