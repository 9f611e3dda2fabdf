"""The report's settings, read from the checked config stored with the runs (the track job logs
it with them; a published report keeps it as `config.json`), never by importing
`dmlbench.config`. A key the stored config lacks (runs ingested without a config, or a config
stored before a setting existed) takes the default of the config schema, the one source of
defaults."""

from __future__ import annotations

import functools
from pathlib import Path

import yaml

from . import verdicts

SCHEMA_PATH = Path(__file__).parents[1] / "schemas" / "config.schema.yaml"


@functools.cache
def _report_defaults() -> dict:
    properties = yaml.safe_load(SCHEMA_PATH.read_text())["properties"]["report"]["properties"]
    return {name: sub["default"] for name, sub in properties.items() if "default" in sub}


def _report(config: dict | None) -> dict:
    return {**_report_defaults(), **((config or {}).get("report") or {})}


def title(config: dict | None, experiment: str) -> str:
    """The config's `report.title`, else "dmlbench: <benchmark>"."""
    return _report(config).get("title") or f"dmlbench: {experiment}"


def rope(config: dict | None) -> float:
    """The region of practical equivalence of the Bayesian comparisons (`report.rope`)."""
    return float(_report(config)["rope"])


def rope_words(config: dict | None) -> str:
    """The rope as every page writes it, in accuracy points: '±1 accuracy point'."""
    return verdicts.rope_text(rope(config))


def description(config: dict | None) -> str:
    return (config or {}).get("description", "")


def paper_tables(config: dict | None) -> list[dict]:
    """The config's `paper_tables` entries (published tables to put beside ours)."""
    return (config or {}).get("paper_tables") or []


def readings(config: dict | None) -> dict | None:
    """The config's `report.readings` (the section "Readings"), or None."""
    return _report(config).get("readings")
