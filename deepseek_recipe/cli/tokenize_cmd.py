"""`deepseek-recipe tokenize`: the token ids and spellings of a text."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from deepseek_recipe.cli._input import add_text_arguments, load_tokenizer, read_text


def register(subparsers: Any) -> None:
    """Add the `tokenize` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "tokenize",
        help="print the token ids and token spellings of a text",
        description="Encode a text with the DeepSeek V4 tokenizer (or --tokenizer) and print one "
        "line per token: the id, a tab, and the token's byte-level spelling as JSON. With --json "
        'print {"ids": [...], "tokens": [...]} instead.',
    )
    add_text_arguments(parser)
    parser.add_argument(
        "--json", action="store_true", help='print {"ids": [...], "tokens": [...]} as JSON'
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print the ids and spellings of the text."""
    tokenizer = load_tokenizer(args)
    ids = tokenizer.encode(read_text(args), allow_special=bool(args.special))
    tokens = [tokenizer.id_to_token(token_id) for token_id in ids]
    if args.json:
        sys.stdout.write(json.dumps({"ids": ids, "tokens": tokens}, ensure_ascii=False) + "\n")
    else:
        for token_id, token in zip(ids, tokens, strict=True):
            sys.stdout.write(f"{token_id}\t{json.dumps(token, ensure_ascii=False)}\n")
    return 0
