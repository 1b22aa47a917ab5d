"""From the recipe's converted request to an engine `GenerationRequest`."""

from __future__ import annotations

from collections.abc import Sequence

from deepseek_recipe import ConvertedRequest
from deepseek_recipe_engine.constraints import constraint_processor, request_grammar
from deepseek_recipe_engine.grammar import EOS_TOKEN, PROMPT_ONLY_TOKENS, special_token_id
from deepseek_recipe_engine.request import ConstraintEnforcement, GenerationRequest

__all__ = ["generation_request"]


def generation_request(
    converted: ConvertedRequest,
    prompt_ids: list[int],
    *,
    context_limit: int,
    enforcement: ConstraintEnforcement = "logits_processor",
    image_tokens: int = 0,
    absent_token_ids: Sequence[int] = (),
) -> GenerationRequest:
    """A generation of `prompt_ids` with the request's sampling settings and output constraint.

    `max_tokens` is the recipe's resolution against `context_limit` (the requested budget, or the
    official default capped by the room left; `ConversionError` when the prompt is too long). The
    prompt counts `image_tokens` more than its ids: what V4.1 images add beyond their
    placeholders, as the official API counts them.
    Generation stops at end-of-sentence and never samples prompt-only markup (`<｜User｜>`, ...:
    `PROMPT_ONLY_TOKENS`) nor `absent_token_ids`, the ids the request's model version lacks
    (`ModelTokenizers.absent_ids`). The output constraint (if any) is enforced as
    `enforcement` says: by a grammar logits processor (deepseek_recipe_engine/constraints.py) or by
    the backend from `grammar`; either way a constraint that cannot compile is a `ConstraintError`.
    """
    # First: a prompt over the context fails here, before the whole request is read as Python.
    max_tokens = converted.resolve_max_tokens(len(prompt_ids) + image_tokens, context_limit)
    options = converted.inference_options
    processor = (
        constraint_processor(converted, len(prompt_ids))
        if enforcement == "logits_processor"
        else None
    )
    grammar = request_grammar(converted) if enforcement == "grammar" else None
    return GenerationRequest(
        prompt_ids=prompt_ids,
        max_tokens=max_tokens,
        temperature=float(options["temperature"]),
        top_p=float(options["top_p"]),
        seed=options.get("seed"),
        logprobs=bool(options.get("logprobs")),
        top_logprobs=int(options.get("top_logprobs") or 0),
        stop_token_ids=[special_token_id(EOS_TOKEN)],
        banned_token_ids=[special_token_id(token) for token in PROMPT_ONLY_TOKENS]
        + list(absent_token_ids),
        logits_processor=processor,
        grammar=grammar,
    )
