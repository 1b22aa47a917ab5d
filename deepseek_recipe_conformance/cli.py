"""Command line: `deepseek-recipe conformance ...` and `python -m deepseek_recipe_conformance`."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from rich.console import Console

from deepseek_recipe_conformance.cases import CaseFileError, load_cases
from deepseek_recipe_conformance.model import PROTOCOLS, Case
from deepseek_recipe_conformance.oracle import (
    NoOracle,
    Oracle,
    RecipeOracle,
    VectorOracle,
    default_vectors_dir,
)
from deepseek_recipe_conformance.reports import (
    ProgressReporter,
    print_summary,
    render_html,
    render_json,
    render_junit,
)
from deepseek_recipe_conformance.runner import RunConfig, run_suite

EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

PROTOCOL_ALIASES = {
    "chat": "chat",
    "chat_completions": "chat",
    "responses": "responses",
    "messages": "messages",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of the conformance command."""
    parser.add_argument(
        "--base-url", required=True, help="endpoint root; /v1/chat/completions etc. are appended"
    )
    parser.add_argument(
        "--api-key",
        default=os.environ.get("DEEPSEEK_API_KEY", ""),
        help="API key (default: $DEEPSEEK_API_KEY)",
    )
    parser.add_argument("--model", required=True, help="model name sent in every request")
    parser.add_argument(
        "--protocols", default=",".join(PROTOCOLS), help="comma list of chat,responses,messages"
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="FAMILY",
        help="run only this family (repeatable, or comma list)",
    )
    parser.add_argument(
        "--case",
        action="append",
        default=[],
        metavar="PREFIX",
        help="run only cases whose id starts with PREFIX",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the JSON report")
    parser.add_argument("--junit", type=Path, metavar="FILE", help="write a JUnit XML report")
    parser.add_argument(
        "--html", type=Path, metavar="FILE", help="write a self-contained HTML report"
    )
    parser.add_argument("--concurrency", type=int, default=4, help="requests in flight (default 4)")
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds per request (default 120)"
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=3,
        help="retries on connection errors, 429 and 5xx (default 3)",
    )
    parser.add_argument(
        "--cases-dir", type=Path, help="directory of case files (default: the bundled cases)"
    )
    parser.add_argument(
        "--oracle",
        choices=("recipe", "vectors"),
        default="recipe",
        help="who answers prompt-token counts and expected errors: the recipe core (default, any "
        "request) or the golden request vectors (recorded requests only)",
    )
    parser.add_argument(
        "--model-version",
        choices=("DeepseekV4Pro", "DeepseekV41Flash"),
        default=None,
        help="the DeepSeek version behind --model, for the recipe oracle (default: the version "
        "of an official model name, DeepseekV4Pro for any other name)",
    )
    parser.add_argument(
        "--vectors",
        type=Path,
        help="golden vectors directory for --oracle vectors (default: $RECIPE_VECTORS)",
    )
    parser.add_argument(
        "--no-oracle", action="store_true", help="skip checks that need the recipe's own answers"
    )
    parser.add_argument(
        "--no-model-checks",
        action="store_true",
        help="skip the few expectations that depend on the model's own choices (assumes_model)",
    )
    parser.add_argument(
        "--attempts",
        type=int,
        default=2,
        help="times a case is sent until the model produces the situation it exercises (a tool "
        "call, a length finish, a stop); then it is reported as not exercised (default 2)",
    )
    parser.add_argument(
        "--max-completion-tokens",
        type=int,
        metavar="N",
        help="the host ends every answer after at most N completion tokens (e.g. a reference "
        "server started with the same option): a length finish at N is then correct",
    )
    parser.add_argument("--list", action="store_true", help="list the selected cases and exit")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:  # type: ignore[type-arg]
    """Add the `conformance` subcommand; its handler is stored as `func`."""
    parser = subparsers.add_parser(
        "conformance", help="check an endpoint against the official DeepSeek API behaviour"
    )
    add_arguments(parser)
    parser.set_defaults(func=run)
    return parser


def _split(values: list[str]) -> list[str]:
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def select(
    cases: list[Case], protocols: list[str], families: list[str], prefixes: list[str]
) -> list[Case]:
    """Cases of the chosen protocols and families (all families when none is given)."""
    return [
        c
        for c in cases
        if c.protocol in protocols
        and (not families or c.family in families)
        and (not prefixes or any(c.id.startswith(p) for p in prefixes))
    ]


def make_oracle(args: argparse.Namespace) -> Oracle:
    """The recipe core by default; the golden vectors with `--oracle vectors` (none when the
    folder is missing); none with `--no-oracle` (oracle checks are skipped)."""
    if args.no_oracle:
        return NoOracle()
    if args.oracle == "recipe":
        return RecipeOracle(args.model, args.model_version)
    folder = args.vectors or default_vectors_dir()
    if (folder / "requests").is_dir():
        return VectorOracle(folder)
    return NoOracle()


def run(args: argparse.Namespace) -> int:
    """Run the suite; 0 when every required check passed, 1 otherwise, 2 on usage errors."""
    console = Console(stderr=False)
    errors = Console(stderr=True)
    if not args.base_url.startswith(("http://", "https://")):
        errors.print(f"--base-url must start with http:// or https://, got {args.base_url!r}")
        return EXIT_USAGE
    protocols = [PROTOCOL_ALIASES.get(p, p) for p in _split([args.protocols])]
    unknown = [p for p in protocols if p not in PROTOCOLS]
    if unknown:
        errors.print(f"unknown protocol(s): {', '.join(unknown)}")
        return EXIT_USAGE
    try:
        cases = load_cases(args.model, args.cases_dir)
    except (CaseFileError, OSError, ValueError) as exc:
        errors.print(f"cannot load cases: {exc}")
        return EXIT_USAGE
    families = _split(args.only)
    known = {c.family for c in cases}
    if any(f not in known for f in families):
        errors.print(f"unknown family; known: {', '.join(sorted(known))}")
        return EXIT_USAGE
    selected = select(cases, protocols, families, _split(args.case))
    if not selected:
        errors.print("no case selected")
        return EXIT_USAGE
    if args.list:
        for case in selected:
            console.print(f"{case.id}  [dim]{case.protocol} · {case.title}[/]")
        return EXIT_PASSED
    config = RunConfig(
        base_url=args.base_url,
        api_key=args.api_key,
        model=args.model,
        concurrency=args.concurrency,
        timeout_s=args.timeout,
        retries=args.retries,
        model_checks=not args.no_model_checks,
        attempts=args.attempts,
        completion_cap=args.max_completion_tokens,
    )
    progress_on = not args.no_progress and console.is_terminal
    with ProgressReporter(console, len(selected), enabled=progress_on) as progress:
        result = asyncio.run(run_suite(selected, config, make_oracle(args), progress.on_result))
    print_summary(console, result)
    for path, render in (
        (args.json, render_json),
        (args.junit, render_junit),
        (args.html, render_html),
    ):
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render(result), encoding="utf-8")
    return EXIT_PASSED if result.passed else EXIT_FAILED


def main(argv: list[str] | None = None, prog: str = "python -m deepseek_recipe_conformance") -> int:
    """Entry point of `python -m deepseek_recipe_conformance` and `deepseek-recipe conformance`."""
    parser = argparse.ArgumentParser(prog=prog, description="DeepSeek API conformance suite")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
