"""Where the fault-detection test leaves its summary lines for the terminal summary."""

from __future__ import annotations

import pytest

FAULT_SUMMARY = pytest.StashKey[list[str]]()
"""Lines (detection rate, report path, missed classes) printed after the test session."""
