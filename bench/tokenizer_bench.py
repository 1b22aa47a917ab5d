"""Single-threaded encode throughput: deepseek_recipe vs Hugging Face `tokenizers`.

Both encode the same generated mixed corpus (see `tests/tokenizer_corpus.py`) document by
document on one thread; the ids must be identical. Prints MB/s for each and the ratio.

    python bench/tokenizer_bench.py [--mb 4] [--seed 1] [--repeat 3]

Build the extension with `maturin develop --release` first: a debug build is far slower.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ["TOKENIZERS_PARALLELISM"] = "false"
os.environ["RAYON_NUM_THREADS"] = "1"

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from tokenizer_corpus import TOKENIZER_JSON, generate_documents
from tokenizers import Tokenizer as HfTokenizer

from deepseek_recipe import Tokenizer


def best_time(encode: Callable[[str], list[int]], documents: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for document in documents:
            encode(document)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=4.0, help="corpus size in MB (default 4)")
    parser.add_argument("--seed", type=int, default=1, help="corpus seed (default 1)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs, best kept (default 3)")
    args = parser.parse_args()

    documents = generate_documents(args.seed, int(args.mb * 1_000_000))
    megabytes = sum(len(doc.encode("utf-8")) for doc in documents) / 1_000_000
    ours = Tokenizer.deepseek_v4()
    hf_special = HfTokenizer.from_file(str(TOKENIZER_JSON))
    data = json.loads(TOKENIZER_JSON.read_text(encoding="utf-8"))
    data["added_tokens"] = []
    hf_plain = HfTokenizer.from_str(json.dumps(data))

    print(f"corpus: {len(documents)} documents, {megabytes:.2f} MB, seed {args.seed}")
    status = 0
    for mode, hf, allow_special in [("plain", hf_plain, False), ("special", hf_special, True)]:

        def ours_encode(text: str, allow_special: bool = allow_special) -> list[int]:
            return ours.encode(text, allow_special)

        def hf_encode(text: str, hf: HfTokenizer = hf) -> list[int]:
            return hf.encode(text, add_special_tokens=False).ids

        def hf_encode_fast(text: str, hf: HfTokenizer = hf) -> list[int]:
            # Skips offsets: HF's fastest path to the ids (a batch of one runs on this thread).
            return hf.encode_batch_fast([text], add_special_tokens=False)[0].ids

        same = all(ours_encode(doc) == hf_encode(doc) for doc in documents)
        ours_s = best_time(ours_encode, documents, args.repeat)
        hf_s = best_time(hf_encode, documents, args.repeat)
        hf_fast_s = best_time(hf_encode_fast, documents, args.repeat)
        print(
            f"{mode:8} ids identical: {same}  deepseek_recipe {megabytes / ours_s:7.2f} MB/s  "
            f"tokenizers encode {megabytes / hf_s:5.2f} MB/s (ratio {hf_s / ours_s:5.1f}x)  "
            f"encode_batch_fast {megabytes / hf_fast_s:5.2f} MB/s "
            f"(ratio {hf_fast_s / ours_s:5.1f}x)"
        )
        status |= 0 if same else 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
