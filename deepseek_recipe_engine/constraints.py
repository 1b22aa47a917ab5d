"""Constrained decoding: a per-request logits processor driven by the recipe's output constraint.

`constraint_processor(converted, prompt_len)` compiles the request's grammar (emitted by the
recipe, `ConvertedRequest.constraint_grammar()`; compiled by deepseek_recipe_engine/grammar.py)
and returns a `GrammarLogitsProcessor`: at every step it feeds the tokens generated since the last
step to the grammar matcher, asks for the set of allowed next tokens and sets every other logit to
-inf (a GPU engine asks for the set as a bitmask while the step runs, and masks the logits on the
device). End-of-sentence is allowed only where the grammar accepts (and is the only choice once
the grammar cannot continue). See docs/constraints.md.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import llguidance
import numpy as np
import torch

from deepseek_recipe import ConvertedRequest
from deepseek_recipe_engine.grammar import (
    EOS_TOKEN,
    ConstraintError,
    compile_grammar,
    engine_tokenizer,
    grammar_tokenizer,
    special_token_id,
)

__all__ = [
    "EOS_TOKEN",
    "ConstraintError",
    "GrammarLogitsProcessor",
    "constraint_processor",
    "request_grammar",
]

_REASONING_STAGES = frozenset({"ReasoningStart", "ReasoningContinuation"})
_NEG_INF = torch.tensor(float("-inf"))


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


def request_grammar(converted: ConvertedRequest) -> str | None:
    """The grammar of a request's output constraint, for a backend that enforces it itself
    (None: no constraint). Raises `ConstraintError` when it cannot be compiled, as
    `constraint_processor` does.

    Such a backend constrains the generated text alone: a prefix continuation's content is not
    consumed first (the bundled engine's processor continues a prefix that fits the constraint).
    """
    grammar = converted.constraint_grammar(engine_tokenizer())
    if grammar is not None:
        compile_grammar(grammar)
    return grammar


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
    grammar = converted.constraint_grammar(engine_tokenizer())
    if grammar is None:
        return None
    matcher = compile_grammar(grammar)
    prefix = _prefix_content(converted)
    options = converted.parsing_options
    starts_in_text = (
        options["thinking_initial_stage"] not in _REASONING_STAGES
        and not options["starts_in_tool_calls"]
    )
    if prefix and starts_in_text:
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
