"""The benchmark cases and their workload files, generated from a seed at run time.

A case is one workload, the implementations that run it and how its cost is counted. Cases of
one `series` are the same workload at 1x, 4x and 16x size: their cost per unit shows whether
the cost grows linearly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from bench import request_workloads, stream_workloads
from bench.stream_workloads import text_pieces
from deepseek_recipe import Tokenizer
from tests.tokenizer_corpus import TOKENIZER_JSON, generate_documents

Family = Literal["tokenize", "request", "stream"]
SCALES = (1, 4, 16)


@dataclass(frozen=True)
class Runner:
    """One implementation as a case runs it: driver, variant and thread count."""

    implementation: Literal["ours", "hf", "tiktoken", "peer"]
    variant: str = ""
    threads: int = 1

    @property
    def label(self) -> str:
        """The row label, e.g. `ours`, `hf encode`, `ours batch x2`."""
        variant = f" {self.variant}" if self.variant else ""
        threads = f" x{self.threads}" if self.threads > 1 else ""
        return f"{self.implementation}{variant}{threads}"


@dataclass
class Case:
    """A workload and its runners; `units` (of `unit`) per run measure its size."""

    name: str
    family: Family
    input: str
    runners: list[Runner]
    items: int
    item: str
    units: float
    unit: str
    runs: int
    repeat: int = 1
    series: str = ""
    scale: int = 1

    def spec(self, runner: Runner, directory: Path) -> dict[str, Any]:
        """The case file a driver reads for `runner`."""
        return {
            "name": self.name,
            "family": self.family,
            "input": str(directory / self.input),
            "variant": runner.variant,
            "threads": runner.threads,
            "runs": self.runs,
            "repeat": self.repeat,
            "tokenizer_json": str(TOKENIZER_JSON),
        }


@dataclass(frozen=True)
class Sizes:
    """Workload sizes: the full run, or the small `--quick` smoke run."""

    corpus_mb: float
    long_doc_kb: int
    one_char_kb: int
    agent_turns: int
    stream_scale: float
    huge_argument_kb: int
    tiny_scale: float
    short_repeat: int
    long_document_chars: int
    stage_repeat: int
    """Calls per timed run of the document's and the 1x agent's convert and render stages (the
    agent's divided by its scale): one sub-millisecond call is too short a sample to time."""

    @staticmethod
    def full(corpus_mb: float) -> Sizes:
        """The sizes of issues #8 and #19: 20 MB corpus, 100K-token agent, 500K-character
        document, 20K-token stream."""
        return Sizes(corpus_mb, 256, 64, 60, 1.0, 64, 0.25, 200, 500_000, 16)

    @staticmethod
    def quick() -> Sizes:
        """A few seconds in all: for the smoke test."""
        return Sizes(0.05, 8, 2, 2, 0.02, 2, 0.01, 5, 2_000, 1)


def write(directory: Path, name: str, data: object) -> str:
    """Writes a workload file (a string as it is, anything else as JSON); returns its name."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    (directory / name).write_text(text, encoding="utf-8")
    return name


def megabytes(documents: list[str]) -> float:
    """The UTF-8 size of `documents` in MB."""
    return sum(len(document.encode("utf-8")) for document in documents) / 1e6


def tokenizer_cases(directory: Path, seed: int, sizes: Sizes, runs: int) -> list[Case]:
    """(a): the mixed corpus document by document (added tokens recognised, against HF; plain
    text, against tiktoken) and as a batch, one long document and a long run of one character at
    1x, 4x, 16x."""
    ours, hf, hf_fast = Runner("ours"), Runner("hf", "encode"), Runner("hf", "fast")
    corpus = generate_documents(seed, int(sizes.corpus_mb * 1e6))
    corpus_file = write(directory, "corpus.json", corpus)
    batch = [Runner("ours", "batch"), Runner("ours", "batch", threads=2)]
    plain = [Runner("ours", "plain"), Runner("tiktoken")]
    cases = [
        tokenize_case("a corpus", corpus_file, [ours, hf, hf_fast], corpus, runs),
        tokenize_case("a corpus plain", corpus_file, plain, corpus, runs),
        tokenize_case("a corpus batch", corpus_file, batch, corpus, runs),
    ]
    mixed = "".join(corpus)
    for scale in SCALES:
        size = sizes.long_doc_kb * 1000 * scale
        document = mixed[:size]
        while len(document) < size:
            document += mixed[: size - len(document)]
        name = write(directory, f"long-doc-{scale}.json", [document])
        long_runners = [ours, Runner("ours", threads=2), hf]
        cases.append(tokenize_case("a long doc", name, long_runners, [document], runs, scale))
        run = "a" * (sizes.one_char_kb * 1000 * scale)
        name = write(directory, f"one-char-{scale}.json", [run])
        cases.append(tokenize_case("a one char", name, [ours, hf], [run], runs, scale))
    return cases


def tokenize_case(
    series: str, file: str, runners: list[Runner], documents: list[str], runs: int, scale: int = 0
) -> Case:
    """A tokenizer case over `documents`; `scale` > 0 puts it in `series` at that scale."""
    return Case(
        name=f"{series} {scale}x" if scale else series,
        family="tokenize",
        input=file,
        runners=runners,
        items=len(documents),
        item="doc",
        units=megabytes(documents),
        unit="MB",
        runs=runs,
        series=series if scale else "",
        scale=scale or 1,
    )


REQUEST_STAGES = ("convert", "render", "convert+render", "encode")
"""The request pipeline's stages as the (b) cases time them: `convert` (parse and check the
body), `render` (the prompt text and special ranges of a converted request, rendered afresh),
`convert+render` (what a host that only renders pays) and `encode` (convert + render + encode)."""


def request_cases(directory: Path, sizes: Sizes, runs: int, peer: bool) -> list[Case]:
    """(b): every stage of the short chat (`short_repeat` requests per run), the long document
    and the agent conversation at 1x, 4x, 16x turns (their convert and render stages
    `stage_repeat` requests per run, the agent's divided by its scale; encode one)."""

    def runners(stage: str) -> list[Runner]:
        return [Runner("ours", stage)] + ([Runner("peer", stage)] if peer else [])

    def stage_cases(
        workload: str,
        file: str,
        units: float,
        unit: str,
        stage_repeat: int,
        encode_repeat: int,
        scale: int = 0,
    ) -> list[Case]:
        cases = []
        for stage in REQUEST_STAGES:
            label = "" if stage == "encode" else f" ({stage})"
            repeat = encode_repeat if stage == "encode" else stage_repeat
            series = f"{workload}{label}" if scale else ""
            cases.append(
                Case(
                    name=f"{workload} {scale}x{label}" if scale else f"{workload}{label}",
                    family="request",
                    input=file,
                    runners=runners(stage),
                    items=repeat,
                    item="request",
                    units=units * repeat,
                    unit=unit,
                    runs=runs,
                    repeat=repeat,
                    series=series,
                    scale=scale or 1,
                )
            )
        return cases

    repeat = sizes.short_repeat
    short = write(directory, "short-chat.json", request_workloads.short_chat())
    cases = stage_cases("b short chat", short, 1, "request", repeat, repeat)
    document = request_workloads.long_document(sizes.long_document_chars)
    name = write(directory, "long-document.json", document)
    size = len(document.encode("utf-8")) / 1e3
    cases += stage_cases("b long doc", name, size, "KB", sizes.stage_repeat, 1)
    for scale in SCALES:
        body = request_workloads.agent_conversation(sizes.agent_turns * scale)
        name = write(directory, f"agent-{scale}.json", body)
        size = len(body.encode("utf-8")) / 1e3
        stage_repeat = max(1, sizes.stage_repeat // scale)
        cases += stage_cases("b agent", name, size, "KB", stage_repeat, 1, scale)
    return cases


def stream_cases(directory: Path, sizes: Sizes, runs: int, peer: bool) -> list[Case]:
    """(c): the generated output as 4-character text pieces and as 1-token id pieces at 1x, 4x,
    16x; adversarial: a huge JSON argument and 1-character pieces, at 1x, 4x, 16x."""
    tokenizer = Tokenizer.deepseek_v4()
    request = stream_workloads.stream_request()
    runners = [Runner("ours"), Runner("ours", "batch")] + ([Runner("peer")] if peer else [])
    cases: list[Case] = []

    def add(name: str, series: str, scale: int, pieces: list[Any], kind: str) -> None:
        file = write(
            directory,
            f"{series.replace(' ', '-')}-{scale}.json",
            {"request": request, "pieces": pieces, "kind": kind},
        )
        cases.append(
            Case(
                name=name,
                family="stream",
                input=file,
                runners=runners,
                items=len(pieces),
                item="piece",
                units=len(pieces),
                unit="piece",
                runs=runs,
                series=series,
                scale=scale,
            )
        )

    for scale in SCALES:
        output = stream_workloads.generated_output(sizes.stream_scale * scale)
        add(f"c text 4ch {scale}x", "c text", scale, text_pieces(output, 4), "text")
        add(f"c token ids {scale}x", "c tokens", scale, tokenizer.encode(output, True), "tokens")
    for scale in SCALES:
        huge = stream_workloads.huge_argument_output(sizes.huge_argument_kb * scale)
        add(f"c huge arg {scale}x", "c huge arg", scale, text_pieces(huge, 4), "text")
        tiny = stream_workloads.generated_output(sizes.tiny_scale * scale)
        add(f"c 1-char pieces {scale}x", "c 1-char", scale, text_pieces(tiny, 1), "text")
    return cases
