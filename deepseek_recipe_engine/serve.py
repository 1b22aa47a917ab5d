"""Running the server: build the backend (bundled engine, vLLM or SGLang) from command-line
options, run uvicorn."""

from __future__ import annotations

import argparse
import asyncio
import logging

import uvicorn

from deepseek_recipe.cli.serve_cmd import DEFAULT_MAX_MODEL_LEN, completion_cap
from deepseek_recipe.requests import ConversionOptions
from deepseek_recipe_engine.backend import Backend
from deepseek_recipe_engine.config import EngineConfig
from deepseek_recipe_engine.connections import ConnectionLimits, uvicorn_config
from deepseek_recipe_engine.remote import EndpointFailure, RemoteOptions, context_limit_of
from deepseek_recipe_engine.server import ServerSettings, create_app


def engine_config(args: argparse.Namespace) -> EngineConfig:
    """The engine of the `serve` options; its KV cache holds at least one `--max-model-len`
    sequence, so the whole context length is usable."""
    max_model_len = args.max_model_len or DEFAULT_MAX_MODEL_LEN
    needed_blocks = -(-max_model_len // EngineConfig.block_size)
    return EngineConfig(
        model=args.model,
        device=args.device,
        dtype=args.dtype,
        max_model_len=max_model_len,
        num_blocks=max(EngineConfig.num_blocks, needed_blocks),
        weights_path=args.weights,
    )


def remote_options(args: argparse.Namespace) -> RemoteOptions:
    """How the server talks to `--backend-url` servers."""
    return RemoteOptions(
        connect_timeout_s=args.backend_connect_timeout,
        read_timeout_s=args.backend_timeout,
        retry_after_s=args.backend_retry,
        api_key=args.backend_api_key,
        max_connections=max(1, args.max_concurrency),
    )


def remote_backend(args: argparse.Namespace) -> Backend:
    """The vLLM or SGLang backend of the options; the context length is `--max-model-len`, else
    the smallest `max_model_len` the servers list (`ConnectionError` when none answers)."""
    from deepseek_recipe_engine.sglang_backend import SglangBackend
    from deepseek_recipe_engine.vllm_backend import VllmBackend

    options = remote_options(args)
    context_limit = args.max_model_len
    if context_limit is None:
        try:
            context_limit = asyncio.run(context_limit_of(args.backend_url, options))
        except EndpointFailure as error:
            raise ConnectionError(f"{error} (start it first, or give --max-model-len)") from error
    kind = VllmBackend if args.backend == "vllm" else SglangBackend
    return kind(args.backend_url, context_limit=context_limit, options=options)


def serve_from_args(args: argparse.Namespace, options: ConversionOptions) -> int:
    """Serve with the options of `deepseek-recipe serve` until interrupted; returns 0."""
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
    _log_to_stderr(args.log_level)
    if args.backend == "engine":
        return _serve_engine(args, settings)
    _run(create_app(remote_backend(args), settings), settings, args)
    return 0


def _log_to_stderr(level: str) -> None:
    """The server's own messages (backends out of reach, the prompt-echo summary) at `level`."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s:     %(name)s: %(message)s"))
    package = logging.getLogger("deepseek_recipe_engine")
    package.addHandler(handler)
    package.setLevel(level.upper())


def _serve_engine(args: argparse.Namespace, settings: ServerSettings) -> int:
    import torch

    from deepseek_recipe_engine.engine import Engine
    from deepseek_recipe_engine.engine_backend import EngineBackend

    if args.threads is not None:
        torch.set_num_threads(args.threads)
    engine = Engine(engine_config(args))
    try:
        _run(create_app(EngineBackend(engine), settings), settings, args)
    finally:
        engine.close()
    return 0


def _run(app: object, settings: ServerSettings, args: argparse.Namespace) -> None:
    uvicorn.Server(
        uvicorn_config(
            app,
            settings.connection_limits,
            host=args.host,
            port=args.port,
            log_level=args.log_level,
        )
    ).run()
