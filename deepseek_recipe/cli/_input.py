"""Shared helpers of the CLI commands: reading the text argument, a file or standard input."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from deepseek_recipe.tokenizer import Tokenizer


def add_text_arguments(parser: argparse.ArgumentParser) -> None:
    """Add `TEXT`, `--file` and `--tokenizer`."""
    parser.add_argument(
        "text",
        nargs="?",
        metavar="TEXT",
        help="the text; without TEXT and --file the text is read from standard input",
    )
    parser.add_argument(
        "--file", "-f", type=Path, metavar="F", help="read the text from file F (UTF-8)"
    )
    parser.add_argument(
        "--tokenizer",
        type=Path,
        metavar="PATH",
        help="a Hugging Face tokenizer.json to use instead of the bundled DeepSeek V4 one",
    )
    parser.add_argument(
        "--special",
        action="store_true",
        help="recognise added tokens such as <think> written in the text "
        "(default: they are plain text, as in prompt text)",
    )


def read_text(args: argparse.Namespace) -> str:
    """The text chosen by `TEXT`, `--file` or standard input."""
    if args.text is not None and args.file is not None:
        raise SystemExit("error: give TEXT or --file, not both")
    if args.text is not None:
        return str(args.text)
    if args.file is not None:
        return Path(args.file).read_text(encoding="utf-8")
    return sys.stdin.read()


def load_tokenizer(args: argparse.Namespace) -> Tokenizer:
    """The tokenizer chosen by `--tokenizer`, else the bundled DeepSeek V4 one."""
    if args.tokenizer is not None:
        return Tokenizer.from_file(args.tokenizer)
    return Tokenizer.deepseek_v4()
