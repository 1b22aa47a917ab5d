"""Where a decode step's time goes: a torch profiler summary of the engine's decode steps.

Admits `--batch` random 32-token prompts, runs until every sequence decodes, then profiles
`--steps` decode steps (greedy) and prints: the wall time of a step, the GPU time of its kernels
(summed, and as the fraction of the wall time the GPU was busy), the kernels launched per step, and
the kernels that take the most GPU time. Run from the repository root:
`python -m bench.engine_profile --device cuda --model medium [--dtype bfloat16] [--batch 1]`.
"""

from __future__ import annotations

import argparse
import time

import torch
from torch.profiler import ProfilerActivity, profile

from bench.engine_bench import prompts
from deepseek_recipe_engine.config import EngineConfig
from deepseek_recipe_engine.engine import DTYPES, EngineCore, build_model
from deepseek_recipe_engine.request import GenerationRequest


def main() -> None:
    """Profile decode steps and print the summary."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default="medium")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--dtype", default="float32", choices=sorted(DTYPES))
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--top", type=int, default=15, help="kernels listed")
    args = parser.parse_args()
    config = EngineConfig(
        model=args.model, device=args.device, dtype=args.dtype, max_num_seqs=max(args.batch, 1)
    )
    core = EngineCore(config, build_model(config))
    for prompt in prompts(args.batch, 32, core.model.config.vocab_size, seed=1):
        core.add_request(
            GenerationRequest(prompt_ids=prompt, max_tokens=3 * args.steps, temperature=0.0)
        )
    while core.scheduler.waiting or any(
        s.num_computed_tokens < len(s) - 1 for s in core.scheduler.running
    ):
        core.step()
    for _ in range(3):  # warm decode steps
        core.step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as trace:
        start = time.perf_counter()
        for _ in range(args.steps):
            core.step()
        wall = (time.perf_counter() - start) / args.steps
    kernels = [e for e in trace.events() or [] if e.device_type.name == "CUDA"]
    gpu = sum(e.time_range.elapsed_us() for e in kernels) / 1e6 / args.steps  # per step
    print(
        f"model={args.model} dtype={args.dtype} batch={args.batch}: step {1000 * wall:.3f} ms "
        f"wall, {1000 * gpu:.3f} ms of kernels ({100 * gpu / wall:.0f}% busy), "
        f"{len(kernels) / args.steps:.0f} kernels per step"
    )
    table = trace.key_averages().table(sort_by="device_time_total", row_limit=args.top)
    print(table)


if __name__ == "__main__":
    main()
