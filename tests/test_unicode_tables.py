"""The pre-tokenizer's generated Unicode tables agree with the reference on every code point."""

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "check_unicode_tables.py"


def test_unicode_tables_match_the_reference_regex_engine():
    spec = importlib.util.spec_from_file_location("check_unicode_tables", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main() == 0
