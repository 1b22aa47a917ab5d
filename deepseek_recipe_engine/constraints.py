"""Constrained decoding: a per-request logits processor driven by the recipe's output constraint.

`constraint_processor(converted, prompt_len)` compiles the request's grammar
(deepseek_recipe_engine/grammar.py) with llguidance and returns a `GrammarLogitsProcessor`: at
every step it feeds the tokens generated since the last step to the grammar matcher, asks for the
set of allowed next tokens and sets every other logit to -inf (a GPU engine asks for the set as a
bitmask while the step runs, and masks the logits on the device). End-of-sentence is allowed only
where the grammar accepts (and is the only choice once the grammar cannot continue).
See docs/constraints.md.

Costs paid once per process: the llguidance tokenizer (~1-3 s for the 129K vocabulary) and each
distinct grammar's compilation (cached; a request gets a copy of a compiled matcher).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from functools import cache, lru_cache
from typing import Any

import llguidance
import numpy as np
import torch

from deepseek_recipe import ConvertedRequest, Tokenizer
from deepseek_recipe_engine.config import tokenizer_json
from deepseek_recipe_engine.grammar import ConstraintError, GrammarSpec, constraint_grammar

__all__ = [
    "EOS_TOKEN",
    "ConstraintError",
    "GrammarLogitsProcessor",
    "compile_grammar",
    "constraint_processor",
    "grammar_spec",
    "grammar_tokenizer",
]

EOS_TOKEN = "<｜end▁of▁sentence｜>"
THINK_END_TOKEN = "</think>"
_THINKING_STAGES = frozenset({"ReasoningStart", "ReasoningContinuation"})
_NEG_INF = torch.tensor(float("-inf"))


@cache
def special_token_id(token: str) -> int:
    """Id of a special token of the bundled V4 tokenizer."""
    token_id = Tokenizer.deepseek_v4().token_to_id(token)
    if token_id is None:
        raise ConstraintError(f"{token!r} is not in the tokenizer")
    return token_id


@cache
def grammar_tokenizer() -> llguidance.LLTokenizer:
    """llguidance's view of the V4 tokenizer (token bytes + trie), built once per process.

    Read from the same `tokenizer.json` the engine's vocabulary comes from (`tokenizer_json()`);
    end-of-sentence is the stop token the grammar allows once it accepts.
    """
    text = tokenizer_json()
    return llguidance.LLTokenizer(text, eos_token=special_token_id(EOS_TOKEN))


@lru_cache(maxsize=256)
def _compiled_matcher(grammar: str) -> llguidance.LLMatcher:
    """A pristine matcher for a grammar; callers take `deep_copy()`s."""
    matcher = llguidance.LLMatcher(grammar_tokenizer(), grammar, log_level=0)
    if matcher.is_error():
        raise ConstraintError(f"grammar does not compile: {matcher.get_error()}")
    return matcher


class GrammarLogitsProcessor:
    """Masks the logits of one request to the tokens its grammar allows next.

    Called by the sampler as `processor(token_ids, logits)` with the whole sequence (prompt and
    generated tokens), or asked for `token_bitmask(token_ids)` by a GPU engine (a `TokenBitmask`);
    either way it consumes the generated tokens it has not seen yet. `mask_seconds` and
    `mask_calls` report what computing the masks cost this request.
    """

    def __init__(self, matcher: llguidance.LLMatcher, prompt_len: int) -> None:
        self._matcher = matcher
        self._prompt_len = prompt_len
        self._consumed = 0
        self._eos = special_token_id(EOS_TOKEN)
        self.mask_seconds = 0.0
        self.mask_calls = 0
        self.error: str | None = None  # set if the matcher ever rejects a token

    @property
    def accepting(self) -> bool:
        """Whether the output so far is complete under the grammar."""
        return self._matcher.is_accepting()

    def __call__(self, token_ids: Sequence[int], logits: torch.Tensor) -> torch.Tensor:
        """`logits` with every token the grammar does not allow next set to -inf."""
        words = self.token_bitmask(token_ids)
        vocab = logits.shape[-1]
        # Bit i of the little-endian words is token i.
        bits = np.unpackbits(words.view(np.uint8), bitorder="little")[:vocab].view(np.bool_)
        if bits.shape[0] < vocab:  # ids beyond the grammar's vocabulary are never allowed
            bits = np.concatenate([bits, np.zeros(vocab - bits.shape[0], dtype=np.bool_)])
        return torch.where(torch.from_numpy(bits), logits, _NEG_INF)

    def token_bitmask(self, token_ids: Sequence[int]) -> np.ndarray:
        """The tokens the grammar allows after `token_ids` (the whole sequence), as int32 words:
        bit `i % 32` of word `i // 32` allows token `i`. Only end-of-sentence once the grammar
        has rejected a token."""
        start = time.perf_counter()
        self._advance(token_ids[self._prompt_len :])
        if self._matcher.is_error():  # never sample garbage: end the output instead
            words = np.zeros(self._eos // 32 + 1, dtype=np.int32)
            words.view(np.uint32)[self._eos // 32] = 1 << (self._eos % 32)
        else:
            words = np.frombuffer(self._matcher.compute_bitmask(), dtype=np.int32)
        self.mask_seconds += time.perf_counter() - start
        self.mask_calls += 1
        return words

    def _advance(self, generated: Sequence[int]) -> None:
        if len(generated) < self._consumed:  # the sequence was cut back: forget the tail
            self._matcher.rollback(self._consumed - len(generated))
            self._consumed = len(generated)
        for token_id in generated[self._consumed :]:
            if not self._matcher.consume_token(token_id) and self.error is None:
                self.error = self._matcher.get_error() or f"token {token_id} rejected"
            self._consumed += 1


def grammar_spec(
    inference_options: Mapping[str, Any], parsing_options: Mapping[str, Any], model_version: str
) -> GrammarSpec | None:
    """What the grammar of a converted request depends on; None when it has no constraint."""
    constraint = inference_options.get("output_constraint")
    if constraint is None:
        return None
    return GrammarSpec(
        kind=constraint["kind"],
        schema=constraint["schema"],
        model_version=model_version,
        # Starting inside the tool-call block wins over reasoning, as in the output parser.
        thinking=parsing_options.get("thinking_initial_stage") in _THINKING_STAGES
        and not parsing_options.get("starts_in_tool_calls"),
        starts_in_tool_calls=bool(parsing_options.get("starts_in_tool_calls")),
        think_end_id=special_token_id(THINK_END_TOKEN),
    )


def compile_grammar(spec: GrammarSpec) -> llguidance.LLMatcher:
    """A fresh matcher for a spec (compiled once per distinct grammar, then copied)."""
    return _compiled_matcher(constraint_grammar(spec)).deep_copy()


def constraint_processor(
    converted: ConvertedRequest, prompt_len: int
) -> GrammarLogitsProcessor | None:
    """The logits processor enforcing a request's output constraint (None if it has none).

    `prompt_len` is the number of prompt tokens: the processor constrains what follows them.
    A prefix continuation whose content is a valid start of the constrained output is continued
    (prefix + generated text satisfy the constraint together); any other prefix content is left
    as it is and the generated text alone satisfies the constraint. Raises `ConstraintError`
    when the constraint cannot be compiled (e.g. an invalid regex).
    """
    spec = grammar_spec(
        converted.inference_options, converted.parsing_options, converted.model_version
    )
    if spec is None:
        return None
    matcher = compile_grammar(spec)
    prefix = _prefix_content(converted)
    if prefix and not spec.thinking and not spec.starts_in_tool_calls:
        ids = grammar_tokenizer().tokenize_str(prefix)
        accepted = matcher.try_consume_tokens(ids)
        if accepted < len(ids):
            matcher.rollback(accepted)
    return GrammarLogitsProcessor(matcher, prompt_len)


def _prefix_content(converted: ConvertedRequest) -> str:
    messages = converted.conversation.get("messages") or []
    last = messages[-1] if messages else None
    if isinstance(last, dict) and last.get("role") == "assistant" and last.get("prefix"):
        content = last.get("content")
        return content if isinstance(content, str) else ""
    return ""
