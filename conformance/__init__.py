"""Endpoint conformance suite: checks any DeepSeek-compatible endpoint against the official API.

Cases are data (`conformance/cases/*.json`), checks are pure functions (`conformance/checks`),
the runner is async (`conformance/runner.py`) and the reports render one result model.
"""
