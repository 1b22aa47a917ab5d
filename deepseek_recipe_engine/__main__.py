"""`python -m deepseek_recipe_engine [serve] [--host ...] [--port ...]`: the reference server."""

from __future__ import annotations

import argparse
import sys

from deepseek_recipe.cli.serve_cmd import add_arguments, backend_problem, conversion_options
from deepseek_recipe_engine.serve import serve_from_args


def main(argv: list[str] | None = None) -> int:
    """Parse the server options and serve."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["serve"]:
        arguments = arguments[1:]
    parser = argparse.ArgumentParser(
        prog="python -m deepseek_recipe_engine",
        description="the reference DeepSeek-compatible HTTP server",
    )
    add_arguments(parser)
    args = parser.parse_args(arguments)
    problem = backend_problem(args)
    if problem is not None:
        parser.error(problem)
    return serve_from_args(args, conversion_options(args))


if __name__ == "__main__":
    sys.exit(main())
