"""Generation throughput of the engine at several batch sizes, against transformers as the peer.

Both sides hold the same weights (the seeded `tiny` model by default) and decode greedily for the
same number of tokens from the same prompts; tokens/s counts generated tokens over the wall time of
the whole generation (prefill included), fastest of `--repeats` runs. Each implementation runs in
its own process; the peer's process first checks its next-token logits against ours. Run from the
repository root:
`python -m bench.engine_bench [--no-peer] [--batches 1 8 64] [--json results.json]`. The peer runs
under `--peer-python` (default `bench/.peer-venv/bin/python` when it exists, else this interpreter),
which needs torch, safetensors and transformers.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from engine.config import EngineConfig
from engine.engine import EngineCore, build_model
from engine.model import DeepseekModel
from engine.request import GenerationRequest

PEER_VENV_PYTHON = Path(__file__).resolve().parent / ".peer-venv" / "bin" / "python"


@dataclass
class Measurement:
    """One timed run: who, at what batch size, how many tokens, how fast."""

    implementation: str
    batch: int
    generated_tokens: int
    seconds: float

    @property
    def tokens_per_second(self) -> float:
        """Generated tokens per wall-clock second."""
        return self.generated_tokens / self.seconds


def prompts(batch: int, length: int, vocab: int, seed: int) -> list[list[int]]:
    """Distinct random prompts (no shared prefix, so the prefix cache plays no part)."""
    rng = random.Random(seed)
    return [[rng.randrange(vocab) for _ in range(length)] for _ in range(batch)]


def run_engine(
    model: DeepseekModel, config: EngineConfig, batch: list[list[int]], new_tokens: int
) -> tuple[Measurement, list[list[int]]]:
    """Generate greedily with a fresh engine; return the timing and the tokens."""
    core = EngineCore(config, model)
    requests = [
        GenerationRequest(prompt_ids=p, max_tokens=new_tokens, temperature=0.0) for p in batch
    ]
    start = time.perf_counter()
    results = core.generate(requests)
    seconds = time.perf_counter() - start
    tokens = [r.token_ids for r in results]
    return Measurement("engine", len(batch), sum(map(len, tokens)), seconds), tokens


def run_peer(
    peer: torch.nn.Module, batch: list[list[int]], new_tokens: int
) -> tuple[Measurement, list[list[int]]]:
    """Generate greedily with transformers' `generate` (KV cache on, no sampling)."""
    input_ids = torch.tensor(batch)
    start = time.perf_counter()
    with torch.no_grad():
        output = peer.generate(  # type: ignore[operator]
            input_ids,
            attention_mask=torch.ones_like(input_ids),
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            do_sample=False,
        )
    seconds = time.perf_counter() - start
    tokens = output[:, input_ids.shape[1] :].tolist()
    return Measurement("transformers", len(batch), sum(map(len, tokens)), seconds), tokens


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Child process: time one implementation at every batch size; return rows and tokens."""
    torch.set_num_threads(args.threads)
    config = EngineConfig(model=args.model, num_blocks=1024, max_num_seqs=max(args.batches))
    model = build_model(config)
    vocab = model.config.vocab_size
    report: dict[str, Any] = {}
    if args.implementation == "transformers":
        from bench.hf_peer import hf_logits, hf_model

        peer = hf_model(model)
        probe = prompts(1, args.prompt_len, vocab, seed=-1)[0]
        ours = EngineCore(config, model).next_token_logits(probe)
        report["logits_max_abs_diff"] = float((ours - hf_logits(peer, probe)).abs().max())
        del model

        def run(batch: list[list[int]]) -> tuple[Measurement, list[list[int]]]:
            return run_peer(peer, batch, args.new_tokens)

        run(prompts(2, 8, vocab, seed=-2))  # warm-up
    else:

        def run(batch: list[list[int]]) -> tuple[Measurement, list[list[int]]]:
            return run_engine(model, config, batch, args.new_tokens)

        run(prompts(2, 8, vocab, seed=-2))  # warm-up
    rows, tokens = [], {}
    for batch_size in args.batches:
        batch = prompts(batch_size, args.prompt_len, vocab, seed=batch_size)
        runs = [run(batch) for _ in range(args.repeats)]
        measurement, generated = min(runs, key=lambda r: r[0].seconds)
        rows.append(asdict(measurement) | {"tokens_per_second": measurement.tokens_per_second})
        tokens[str(batch_size)] = generated
    return report | {"measurements": rows, "tokens": tokens}


def spawn(args: argparse.Namespace, implementation: str) -> dict[str, Any]:
    """Run `measure` for one implementation in a fresh Python process."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "result.json"
        python = args.peer_python if implementation == "transformers" else sys.executable
        command = [python, "-m", "bench.engine_bench", "--implementation", implementation]
        command += ["--model", args.model, "--threads", str(args.threads), "--json", str(out)]
        command += ["--prompt-len", str(args.prompt_len), "--new-tokens", str(args.new_tokens)]
        command += ["--repeats", str(args.repeats)]
        command += ["--batches", *map(str, args.batches)]
        subprocess.run(command, check=True, cwd=Path(__file__).resolve().parent.parent)
        return json.loads(out.read_text(encoding="utf-8"))


def main() -> None:
    """Time each implementation in its own process, compare their outputs, print a table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--prompt-len", type=int, default=32)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3, help="report the fastest of N runs")
    parser.add_argument("--no-peer", action="store_true", help="measure the engine alone")
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
    print(
        f"\nmodel={args.model} threads={args.threads} prompt={args.prompt_len} "
        f"new_tokens={args.new_tokens} best of {args.repeats} (CPU)"
    )
    print(f"{'implementation':<14} {'batch':>5} {'tokens':>7} {'seconds':>8} {'tokens/s':>9}")
    for name, result in results.items():
        for row in result["measurements"]:
            print(
                f"{name:<14} {row['batch']:>5} {row['generated_tokens']:>7} "
                f"{row['seconds']:>8.3f} {row['tokens_per_second']:>9.1f}"
            )
    if args.json:
        summary = {"args": vars(args)} | {
            name: {k: v for k, v in result.items() if k != "tokens"}
            for name, result in results.items()
        }
        Path(args.json).write_text(json.dumps(summary, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
