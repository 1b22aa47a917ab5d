"""Smoke test of the benchmark harness: `python -m bench --quick` on ours and HF (and tiktoken
where it is installed), no peer.

No timing is asserted; the run must finish, report every case, and find our ids identical to
HF `tokenizers` on every tokenizer workload.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def test_quick_run_reports_every_case_and_matches_hf(tmp_path: Path):
    raw, markdown = tmp_path / "bench.json", tmp_path / "bench.md"
    command = [sys.executable, "-m", "bench", "--quick", "--no-peer"]
    # A subset, to stay fast: every family and stage, HF, two threads.
    for case in ["a corpus", "b agent 1x", "c token ids 1x"]:
        command += ["--only", case]
    command += ["--json", str(raw), "--markdown", str(markdown)]
    done = subprocess.run(
        command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = json.loads(raw.read_text(encoding="utf-8"))["rows"]

    assert all(row["error"] is None and row["seconds"] for row in rows)
    assert {row["family"] for row in rows} == {"tokenize", "request", "stream"}
    hf_rows = [row for row in rows if row["implementation"].startswith("hf")]
    assert hf_rows, "HF tokenizers did not run"
    assert all(row["check"] == "same ids" for row in hf_rows)
    two_threads = [row for row in rows if row["threads"] == 2]
    assert two_threads and all(row["check"] == "same ids" for row in two_threads)
    assert not any(row["implementation"].startswith("peer") for row in rows)

    assert {row["implementation"] for row in rows if row["family"] == "request"} == {
        "ours convert",
        "ours render",
        "ours convert+render",
        "ours encode",
    }
    # tiktoken (set up as DeepSeek V4) runs only where it is installed; then its ids are ours.
    tiktoken_rows = [row for row in rows if row["implementation"] == "tiktoken"]
    assert all(row["check"] == "same ids" for row in tiktoken_rows)
    text = markdown.read_text(encoding="utf-8")
    assert "| case | implementation |" in text
    assert "| series | implementation |" in text
    assert "python -m bench --quick --no-peer" in text


def test_scaling_table_has_every_row_and_the_machine_ceilings(tmp_path: Path):
    markdown = tmp_path / "scaling.md"
    command = [sys.executable, "-m", "bench.scaling", "--corpus-mb", "0.2", "--long-mb", "0.05"]
    command += ["--threads", "1", "2", "--runs", "1", "--no-peer", "--no-tiktoken"]
    command += ["--markdown", str(markdown)]
    done = subprocess.run(
        command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line for line in markdown.read_text(encoding="utf-8").splitlines() if line[:2] == "| "]
    names = {line.split("|")[1].strip() for line in rows[1:]}
    assert "machine, SHA-256 (ceiling)" in names
    assert "ours, batch encode (array)" in names and "ours, long text encode (array)" in names
    assert "ours, batch decode (bytes)" in names
    assert "corpus ids: identical" in markdown.read_text(encoding="utf-8")
    for ceiling_row in ("SHA-256", "one process per thread"):
        ceiling = next(line for line in rows if ceiling_row in line).split("|")[2:4]
        assert all(cell.strip() for cell in ceiling), f"{ceiling_row} lacks a thread count"


def test_call_probe_reports_every_call_and_loops_on_request():
    table = subprocess.run(
        [sys.executable, "-m", "bench.call_probe"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert table.returncode == 0, table.stderr
    rows = [line.split("|")[1:-1] for line in table.stdout.splitlines()[2:]]
    assert [row[0].strip() for row in rows] == [
        "short chat convert",
        "short chat convert + render",
        "short chat convert + render + encode",
        "document convert",
        "1 MB copy (bytearray)",
    ]
    for _, best, faults, switches in rows:
        assert float(best.split()[0]) > 0 and float(faults) >= 0 and float(switches) >= 0
    for workload in ["short", "document"]:
        looped = subprocess.run(
            [sys.executable, "-m", "bench.call_probe", "--loop", workload, "0.05"],
            cwd=REPO_ROOT,
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert looped.returncode == 0, looped.stderr


def test_cpu_spread_has_a_row_per_usable_cpu(tmp_path: Path):
    markdown = tmp_path / "spread.md"
    command = [sys.executable, "-m", "bench.cpu_spread", "--corpus-mb", "0.05", "--calls", "20"]
    done = subprocess.run(
        [*command, "--markdown", str(markdown)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line.split("|")[1:-1] for line in markdown.read_text(encoding="utf-8").splitlines()]
    rows = [row for row in rows if row and row[0].strip().isdigit()]
    assert [int(row[0]) for row in rows] == sorted(os.sched_getaffinity(0))
    for _, short_chat, ours, tiktoken, ratio, ids in rows:
        assert float(short_chat.split()[0]) > 0 and float(ours) > 0
        # tiktoken only where it is installed; then its ids must be ours.
        assert ids.strip() in ("same ids", "-")
        assert (tiktoken.strip() == "-") == (ratio.strip() == "-")
