"""The command line: exit codes, case selection, report files, subcommand registration."""

import argparse
import asyncio
import json
import xml.etree.ElementTree as ET

import httpx

from deepseek_recipe_conformance import cli
from tests.conformance.fault_proxy import FaultProxy
from tests.conformance.faults import FAULTS
from tests.conformance.harness import API_KEY, MODEL, all_cases, replay_host
from tests.conformance.http_server import serve


def _run_cli(argv, fault_name=None):
    async def scenario():
        async with replay_host(all_cases()) as (url, _host), httpx.AsyncClient() as client:
            fault = next((f for f in FAULTS if f.name == fault_name), None)
            async with serve(FaultProxy(url, client, fault)) as proxy_url:
                args = [
                    "--base-url",
                    proxy_url,
                    "--api-key",
                    API_KEY,
                    "--model",
                    MODEL,
                    "--no-progress",
                    "--retries",
                    "0",
                    *argv,
                ]
                return await asyncio.to_thread(cli.main, args)

    return asyncio.run(scenario())


def test_passing_run_writes_all_reports(tmp_path, capsys):
    paths = {kind: tmp_path / f"r.{kind}" for kind in ("json", "xml", "html")}
    code = _run_cli(
        [
            "--only",
            "streaming",
            "--protocols",
            "chat,messages",
            "--json",
            str(paths["json"]),
            "--junit",
            str(paths["xml"]),
            "--html",
            str(paths["html"]),
        ]
    )
    assert code == cli.EXIT_PASSED
    data = json.loads(paths["json"].read_text())
    assert data["summary"]["passed"] and {c["protocol"] for c in data["cases"]} == {
        "chat",
        "messages",
    }
    assert {c["family"] for c in data["cases"]} == {"streaming"}
    assert ET.parse(paths["xml"]).getroot().get("failures") == "0"
    assert paths["html"].read_text().startswith("<!DOCTYPE html>")
    assert "PASS" in capsys.readouterr().out


def test_required_failure_exits_non_zero():
    assert (
        _run_cli(
            ["--only", "validation", "--case", "validation.params"],
            fault_name="bad_param_status_422",
        )
        == cli.EXIT_FAILED
    )


def test_optional_failure_keeps_exit_zero():
    assert _run_cli(["--only", "cache"], fault_name="cache_never_hits") == cli.EXIT_PASSED


def test_usage_errors_and_listing(capsys):
    base = ["--base-url", "http://127.0.0.1:9", "--model", "m"]
    assert cli.main([*base, "--only", "nope"]) == cli.EXIT_USAGE
    assert cli.main(["--base-url", "ftp://x", "--model", "m"]) == cli.EXIT_USAGE
    assert cli.main([*base, "--protocols", "grpc"]) == cli.EXIT_USAGE
    assert cli.main([*base, "--list", "--only", "logprobs"]) == cli.EXIT_PASSED
    listed = capsys.readouterr().out
    assert "logprobs.chat.body" in listed and "tools." not in listed


def test_register_adds_the_subcommand():
    parser = argparse.ArgumentParser(prog="deepseek-recipe")
    cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        ["conformance", "--base-url", "http://x", "--model", "m", "--only", "tools,stop"]
    )
    assert (
        args.func is cli.run
        and args.only == ["tools,stop"]
        and args.protocols == "chat,responses,messages"
    )
