"""Generation throughput of the engine at several batch sizes, against transformers as the peer.

Both sides hold the same weights (the seeded `tiny` model by default) in the same dtype and decode
greedily for the same number of tokens from the same prompts; tokens/s counts generated tokens over
the wall time of the whole generation (prefill included), fastest of `--repeats` runs. For the
engine it also reports the time of one decode step (the median step of the run's second half) and
the fraction of the memory-bandwidth limit that step reaches: the bytes it must read (every weight
but the embedding table and the routed experts, one embedding row per sequence, the routed experts
a batch can touch, the cached latents) over the step time, against the device's copy bandwidth
measured in the same process. Each implementation runs in its own process; the peer's process first
checks its next-token logits against ours, and the engine's process checks batch invariance (the
first sequences of each batch, run again alone with logprobs, must give bit-identical tokens and
logprobs) and, with `--mask-check`, the cost of constrained decoding at batch 1: the decode-step
time a JSON-schema grammar adds per token, and the host time its masks take. Run from the
repository root: `python -m bench.engine_bench [--device cuda] [--model medium] [--dtype bfloat16]
[--no-peer] [--batches 1 8 64 256] [--mask-check] [--json results.json]`. The peer runs under
`--peer-python` (default `bench/.peer-venv/bin/python` when it exists, else this interpreter),
which needs torch, safetensors and transformers.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from deepseek_recipe_engine.config import EngineConfig
from deepseek_recipe_engine.engine import DTYPES, EngineCore, build_model
from deepseek_recipe_engine.model import DeepseekModel
from deepseek_recipe_engine.request import GenerationRequest, LogitsProcessor, Tokens

PEER_VENV_PYTHON = Path(__file__).resolve().parent / ".peer-venv" / "bin" / "python"


@dataclass
class Measurement:
    """One timed run: who, at what batch size, how many tokens, how fast."""

    implementation: str
    batch: int
    generated_tokens: int
    seconds: float
    step_seconds: float | None = None  # one decode step (engine only)

    @property
    def tokens_per_second(self) -> float:
        """Generated tokens per wall-clock second."""
        return self.generated_tokens / self.seconds


def prompts(batch: int, length: int, vocab: int, seed: int) -> list[list[int]]:
    """Distinct random prompts (no shared prefix, so the prefix cache plays no part)."""
    rng = random.Random(seed)
    return [[rng.randrange(vocab) for _ in range(length)] for _ in range(batch)]


def synchronize(device: str) -> None:
    """Wait for queued GPU work, so that wall-clock timings cover it."""
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def run_engine(
    model: DeepseekModel,
    config: EngineConfig,
    batch: list[list[int]],
    new_tokens: int,
    processor: LogitsProcessor | None = None,
) -> tuple[Measurement, list[list[int]]]:
    """Generate greedily with a fresh engine, timing every step; return the timing (with the median
    step of the run's second half, where every step only decodes) and the tokens."""
    core = EngineCore(config, model)
    ids = [
        core.add_request(
            GenerationRequest(
                prompt_ids=p, max_tokens=new_tokens, temperature=0.0, logits_processor=processor
            )
        )
        for p in batch
    ]
    tokens: dict[int, list[int]] = {i: [] for i in ids}
    steps = []
    synchronize(config.device)
    start = time.perf_counter()
    while core.has_work():
        step_start = time.perf_counter()
        for request_id, chunk in core.step():
            if isinstance(chunk, Tokens):
                tokens[request_id].extend(chunk.token_ids)
        steps.append(time.perf_counter() - step_start)  # a step ends on the sampled ids
    seconds = time.perf_counter() - start
    generated = [tokens[i] for i in ids]
    step = statistics.median(steps[len(steps) // 2 :])
    return Measurement("engine", len(batch), sum(map(len, generated)), seconds, step), generated


def decode_bytes(model: DeepseekModel, batch: int, context: int) -> int:
    """The fewest bytes one decode step of `batch` sequences with `context` cached tokens each must
    read: every weight but the embedding table and the routed experts, one embedding row per
    sequence, the routed experts `batch` tokens can choose (at most all), and the cached latents."""
    cfg = model.config
    experts = min(cfg.n_routed_experts, batch * cfg.num_experts_per_tok)
    total = 0
    for name, tensor in model.state_dict().items():
        size = tensor.numel() * tensor.element_size()
        if name == "model.embed_tokens.weight":
            size = batch * tensor.shape[1] * tensor.element_size()
        elif name.endswith(("experts.gate_up_proj", "experts.down_proj")):
            size = size // cfg.n_routed_experts * experts
        total += size
    cache_entry = cfg.latent_dim * next(model.parameters()).element_size()
    return total + batch * context * cache_entry * cfg.num_layers


def copy_bandwidth(device: str) -> float | None:
    """Bytes per second of a 1 GiB device-to-device copy (read plus written; median of 10), the
    memory-bandwidth limit the decode steps are measured against; None off CUDA."""
    if not device.startswith("cuda"):
        return None
    source = torch.empty(2**28, device=device)
    target = torch.empty_like(source)
    target.copy_(source)
    times = []
    for _ in range(10):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        target.copy_(source)
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end) / 1000)
    return 2 * source.numel() * source.element_size() / statistics.median(times)


def mask_cost(
    model: DeepseekModel, config: EngineConfig, prompt: list[int], new_tokens: int
) -> dict[str, float]:
    """Constrained decoding at batch 1 (a JSON schema whose string keeps the grammar open): the
    decode-step time it adds per token over the same unconstrained run (fastest of three runs
    each), and the host time its masks take per token (hidden behind the GPU's step when the
    first is smaller)."""
    import deepseek_recipe as dr  # the recipe and llguidance: only this check needs them
    from deepseek_recipe_engine.constraints import GrammarLogitsProcessor, constraint_processor

    schema = {
        "type": "object",
        "properties": {"text": {"type": "string", "minLength": 4 * new_tokens}},
        "required": ["text"],
    }
    converted = dr.convert(
        {
            "model": "DeepSeek-V4-Pro",
            "messages": [{"role": "user", "content": "Reply in json."}],
            "thinking": {"type": "disabled"},
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": schema},
            },
        }
    )

    processors: list[GrammarLogitsProcessor] = []

    def fastest_step(constrained: bool) -> float:
        """The fastest decode step of three runs (each the median of its decode steps)."""
        steps = []
        for _ in range(3):
            processor = constraint_processor(converted, len(prompt)) if constrained else None
            if isinstance(processor, GrammarLogitsProcessor):
                processors.append(processor)
            steps.append(run_engine(model, config, [prompt], new_tokens, processor)[0])
        return min(m.step_seconds or 0.0 for m in steps)

    plain, constrained = fastest_step(False), fastest_step(True)
    calls = sum(p.mask_calls for p in processors)
    return {
        "mask_added_us_per_token": 1e6 * (constrained - plain),
        "mask_host_us_per_token": 1e6 * sum(p.mask_seconds for p in processors) / calls,
    }


def sampled_run(
    model: DeepseekModel,
    config: EngineConfig,
    batch: list[list[int]],
    seeds: list[int],
    new_tokens: int,
) -> list[tuple[list[int], list[tuple[int, float]]]]:
    """Tokens and chosen-token logprobs of `batch` sampled together (temperature 1, one seed per
    prompt)."""
    core = EngineCore(config, model)
    requests = [
        GenerationRequest(
            prompt_ids=p, max_tokens=new_tokens, temperature=1.0, seed=seed, logprobs=True
        )
        for p, seed in zip(batch, seeds, strict=True)
    ]
    return [
        (r.token_ids, [(lp.token_id, lp.logprob) for lp in r.logprobs])
        for r in core.generate(requests)
    ]


def batch_invariance(
    model: DeepseekModel, config: EngineConfig, batch: list[list[int]], new_tokens: int
) -> tuple[int, int]:
    """How many of the batch's first (up to 4) sequences, sampled in the full batch, match the same
    sequence sampled alone bit for bit (tokens and logprobs); returns (identical, checked)."""
    together = sampled_run(model, config, batch, list(range(len(batch))), new_tokens)
    checked = min(4, len(batch))
    alone = [sampled_run(model, config, [batch[i]], [i], new_tokens)[0] for i in range(checked)]
    return sum(a == b for a, b in zip(alone, together, strict=False)), checked


def run_peer(
    peer: torch.nn.Module, batch: list[list[int]], new_tokens: int, device: str
) -> tuple[Measurement, list[list[int]]]:
    """Generate greedily with transformers' `generate` (KV cache on, no sampling)."""
    input_ids = torch.tensor(batch, device=device)
    synchronize(device)
    start = time.perf_counter()
    with torch.no_grad():
        output = peer.generate(  # type: ignore[operator]
            input_ids,
            attention_mask=torch.ones_like(input_ids),
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            do_sample=False,
        )
    synchronize(device)
    seconds = time.perf_counter() - start
    tokens = output[:, input_ids.shape[1] :].tolist()
    return Measurement("transformers", len(batch), sum(map(len, tokens)), seconds), tokens


Runner = Callable[[list[list[int]]], tuple[Measurement, list[list[int]]]]
"""Generates greedily for a batch of prompts: (timing, tokens)."""


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Child process: time one implementation at every batch size; return rows and tokens."""
    torch.set_num_threads(args.threads)
    config = EngineConfig(
        model=args.model,
        num_blocks=args.num_blocks,
        max_num_seqs=max(args.batches),
        device=args.device,
        dtype=args.dtype,
    )
    model = build_model(config)
    if args.implementation == "transformers":
        return measure_peer(args, model, config)
    return measure_engine(args, model, config)


def timed_batches(
    args: argparse.Namespace, vocab: int, run: Runner, extra: Callable[..., dict[str, Any]]
) -> dict[str, Any]:
    """Time `run` at every batch size (fastest of `--repeats`); `extra(batch, runs)` adds to each
    row. Returns the rows and the generated tokens."""
    run(prompts(2, 8, vocab, seed=-2))  # warm-up
    rows, tokens = [], {}
    for batch_size in args.batches:
        batch = prompts(batch_size, args.prompt_len, vocab, seed=batch_size)
        runs = [run(batch) for _ in range(args.repeats)]
        measurement, generated = min(runs, key=lambda r: r[0].seconds)
        row = asdict(measurement) | {"tokens_per_second": measurement.tokens_per_second}
        rows.append(row | extra(batch, [m for m, _ in runs]))
        tokens[str(batch_size)] = generated
    return {"measurements": rows, "tokens": tokens}


def measure_peer(
    args: argparse.Namespace, model: DeepseekModel, config: EngineConfig
) -> dict[str, Any]:
    """transformers' `generate` on the same weights, after checking its logits against ours."""
    from bench.hf_peer import hf_logits, hf_model

    vocab = model.config.vocab_size
    peer = hf_model(model)
    probe = prompts(1, args.prompt_len, vocab, seed=-1)[0]
    ours = EngineCore(config, model).next_token_logits(probe)
    theirs = hf_logits(peer, probe)
    report = {"logits_max_abs_diff": float((ours - theirs).abs().max().cpu())}
    del model, ours  # the peer runs alone on the device

    def run(batch: list[list[int]]) -> tuple[Measurement, list[list[int]]]:
        return run_peer(peer, batch, args.new_tokens, args.device)

    return report | timed_batches(args, vocab, run, lambda batch, runs: {})


def measure_engine(
    args: argparse.Namespace, model: DeepseekModel, config: EngineConfig
) -> dict[str, Any]:
    """The engine: tokens/s, decode step, bandwidth fraction and batch invariance per batch size,
    and the cost of constrained decoding with `--mask-check`."""
    vocab = model.config.vocab_size
    bandwidth = copy_bandwidth(args.device)

    def run(batch: list[list[int]]) -> tuple[Measurement, list[list[int]]]:
        return run_engine(model, config, batch, args.new_tokens)

    def extra(batch: list[list[int]], runs: list[Measurement]) -> dict[str, Any]:
        identical, checked = batch_invariance(model, config, batch, args.new_tokens)
        step = min(m.step_seconds or 0.0 for m in runs)
        row: dict[str, Any] = {"batch_invariant": f"{identical}/{checked}", "step_seconds": step}
        if bandwidth is not None:
            context = args.prompt_len + args.new_tokens // 2
            row["bandwidth_fraction"] = decode_bytes(model, len(batch), context) / step / bandwidth
        return row

    report: dict[str, Any] = {"copy_bandwidth": bandwidth}
    report |= timed_batches(args, vocab, run, extra)
    if args.mask_check:
        probe = prompts(1, args.prompt_len, vocab, seed=-3)[0]
        report |= mask_cost(model, config, probe, args.new_tokens)
    return report


def spawn(args: argparse.Namespace, implementation: str) -> dict[str, Any]:
    """Run `measure` for one implementation in a fresh Python process."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "result.json"
        python = args.peer_python if implementation == "transformers" else sys.executable
        command = [python, "-m", "bench.engine_bench", "--implementation", implementation]
        command += ["--model", args.model, "--threads", str(args.threads), "--json", str(out)]
        command += ["--device", args.device, "--num-blocks", str(args.num_blocks)]
        command += ["--prompt-len", str(args.prompt_len), "--new-tokens", str(args.new_tokens)]
        command += ["--repeats", str(args.repeats), "--dtype", args.dtype]
        command += ["--batches", *map(str, args.batches)]
        command += ["--mask-check"] if args.mask_check else []
        subprocess.run(command, check=True, cwd=Path(__file__).resolve().parent.parent)
        return json.loads(out.read_text(encoding="utf-8"))


def device_name(device: str) -> str:
    """A readable name of the torch device: the GPU's model for CUDA, else the device string."""
    if device.startswith("cuda") and torch.cuda.is_available():
        return f"{device} ({torch.cuda.get_device_name(torch.device(device))})"
    return device


def main() -> None:
    """Time each implementation in its own process, compare their outputs, print a table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--prompt-len", type=int, default=32)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1, help="CPU threads for torch")
    parser.add_argument("--device", default="cpu", help="torch device, e.g. cuda (default cpu)")
    parser.add_argument("--dtype", default="float32", choices=sorted(DTYPES))
    parser.add_argument("--num-blocks", type=int, default=1024, help="KV-cache blocks (engine)")
    parser.add_argument("--repeats", type=int, default=3, help="report the fastest of N runs")
    parser.add_argument("--no-peer", action="store_true", help="measure the engine alone")
    parser.add_argument(
        "--mask-check", action="store_true", help="measure constrained decoding at batch 1"
    )
    parser.add_argument(
        "--peer-python",
        default=str(PEER_VENV_PYTHON) if PEER_VENV_PYTHON.exists() else sys.executable,
        help="interpreter with transformers installed (default: bench/.peer-venv if present)",
    )
    parser.add_argument("--implementation", choices=["engine", "transformers"], help="child mode")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args()
    if args.implementation:
        result = measure(args)
        Path(args.json).write_text(json.dumps(result), encoding="utf-8")
        return

    results = {"engine": spawn(args, "engine")}
    if not args.no_peer:
        results["transformers"] = spawn(args, "transformers")
        diff = results["transformers"]["logits_max_abs_diff"]
        print(f"logits parity with transformers (same weights): max |diff| = {diff:.2e}")
        for batch in map(str, args.batches):
            ours, theirs = (
                results["engine"]["tokens"][batch],
                results["transformers"]["tokens"][batch],
            )
            same = sum(a == b for a, b in zip(ours, theirs, strict=True))
            print(f"batch {batch}: {same}/{len(ours)} greedy sequences identical to the peer")
    engine = results["engine"]
    print(
        f"\nmodel={args.model} dtype={args.dtype} threads={args.threads} "
        f"prompt={args.prompt_len} new_tokens={args.new_tokens} best of {args.repeats} "
        f"device={device_name(args.device)}"
    )
    if engine.get("copy_bandwidth"):
        print(f"copy bandwidth (the limit below): {engine['copy_bandwidth'] / 1e12:.2f} TB/s")
    if "mask_added_us_per_token" in engine:
        print(
            f"constrained decoding, batch 1: {engine['mask_added_us_per_token']:.1f} us/token added"
            f" to the decode step; masks take {engine['mask_host_us_per_token']:.1f} us/token on"
            " the host"
        )
    header = f"{'implementation':<14} {'batch':>5} {'tokens':>7} {'seconds':>8} {'tokens/s':>9}"
    print(header + f" {'step ms':>8} {'of BW':>6} {'invariant':>9}")
    for name, result in results.items():
        for row in result["measurements"]:
            step = row.get("step_seconds")
            fraction = row.get("bandwidth_fraction")
            print(
                f"{name:<14} {row['batch']:>5} {row['generated_tokens']:>7} "
                f"{row['seconds']:>8.3f} {row['tokens_per_second']:>9.1f} "
                f"{'-' if step is None else f'{1000 * step:.2f}':>8} "
                f"{'-' if fraction is None else f'{100 * fraction:.0f}%':>6} "
                f"{row.get('batch_invariant', '-'):>9}"
            )
    if args.json:
        summary = {"args": vars(args)} | {
            name: {k: v for k, v in result.items() if k != "tokens"}
            for name, result in results.items()
        }
        Path(args.json).write_text(json.dumps(summary, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
