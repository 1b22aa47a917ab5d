"""Endpoint conformance suite: checks any DeepSeek-compatible endpoint against the official API.

Cases are data (`deepseek_recipe_conformance/cases/*.json`), checks are pure functions
(`deepseek_recipe_conformance/checks`), the runner is async
(`deepseek_recipe_conformance/runner.py`) and the reports render one result model.
"""
