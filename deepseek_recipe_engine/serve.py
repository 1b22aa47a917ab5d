"""Running the reference server: build the engine from command-line options, run uvicorn."""

from __future__ import annotations

import argparse

import torch
import uvicorn

from deepseek_recipe.requests import ConversionOptions
from deepseek_recipe_engine.config import EngineConfig
from deepseek_recipe_engine.engine import Engine
from deepseek_recipe_engine.server import ServerSettings, create_app


def serve_from_args(args: argparse.Namespace, options: ConversionOptions) -> int:
    """Serve with the options of `deepseek-recipe serve` until interrupted; returns 0."""
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    config = EngineConfig(
        model=args.model,
        device=args.device,
        max_model_len=args.max_model_len,
        weights_path=args.weights,
    )
    settings = ServerSettings(
        api_key=args.api_key,
        max_body_bytes=args.max_body_bytes,
        max_concurrent_requests=args.max_concurrency,
        keepalive_interval_s=args.keepalive,
        conversion_options=options,
        tokenizer_path=args.tokenizer,
        max_completion_tokens=args.max_completion_tokens,
        default_seed=args.seed,
    )
    engine = Engine(config)
    try:
        uvicorn.run(
            create_app(engine, settings), host=args.host, port=args.port, log_level=args.log_level
        )
    finally:
        engine.close()
    return 0
