"""Endpoint conformance suite: checks any DeepSeek-compatible endpoint against the official API.

Cases are data (`cases/*.json`), checks are pure functions (`checks/`) that judge what the host
returned against the official rules (the recipe itself re-derives the expected answer,
`replay.py`), the runner is async (`runner.py`) and the reports render one result model.
"""
