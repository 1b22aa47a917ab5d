"""Running the reference server: build the engine from command-line options, run uvicorn."""

from __future__ import annotations

import argparse

import torch
import uvicorn

from deepseek_recipe.cli.serve_cmd import completion_cap
from deepseek_recipe.requests import ConversionOptions
from deepseek_recipe_engine.config import EngineConfig
from deepseek_recipe_engine.connections import ConnectionLimits, uvicorn_config
from deepseek_recipe_engine.engine import Engine
from deepseek_recipe_engine.server import ServerSettings, create_app


def engine_config(args: argparse.Namespace) -> EngineConfig:
    """The engine of the `serve` options; its KV cache holds at least one `--max-model-len`
    sequence, so the whole context length is usable."""
    needed_blocks = -(-args.max_model_len // EngineConfig.block_size)
    return EngineConfig(
        model=args.model,
        device=args.device,
        dtype=args.dtype,
        max_model_len=args.max_model_len,
        num_blocks=max(EngineConfig.num_blocks, needed_blocks),
        weights_path=args.weights,
    )


def serve_from_args(args: argparse.Namespace, options: ConversionOptions) -> int:
    """Serve with the options of `deepseek-recipe serve` until interrupted; returns 0."""
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    config = engine_config(args)
    settings = ServerSettings(
        api_key=args.api_key,
        max_body_bytes=args.max_body_bytes,
        max_concurrent_requests=args.max_concurrency,
        keepalive_interval_s=args.keepalive,
        conversion_options=options,
        tokenizer_path=args.tokenizer,
        max_completion_tokens=completion_cap(args),
        prepare_threads=args.prepare_threads,
        image_threads=args.image_threads,
        max_body_memory_bytes=args.max_body_memory,
        connection_limits=ConnectionLimits(
            header_timeout_s=args.header_timeout,
            body_timeout_s=args.body_timeout,
            max_connections=args.max_connections,
        ),
        default_seed=args.seed,
    )
    engine = Engine(config)
    app = create_app(engine, settings)
    try:
        uvicorn.Server(
            uvicorn_config(
                app,
                settings.connection_limits,
                host=args.host,
                port=args.port,
                log_level=args.log_level,
            )
        ).run()
    finally:
        engine.close()
    return 0
