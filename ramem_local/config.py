"""Settings: defaults ← config file ← environment ← flags (later wins).

The config file is JSON (``platformdirs.user_config_dir("ramem")/config.json``, or the path in
``RAMEM_CONFIG``), e.g. ``{"bank": "personal", "embedder": "qwen3-embedding-0.6b", "k": 10}``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import platformdirs

APP = "ramem"
DEFAULT_BANK = "default"

ENVIRONMENT = {
    "db": "RAMEM_DB",
    "bank": "RAMEM_BANK",
    "models_dir": "RAMEM_MODELS_DIR",
    "embedder": "RAMEM_EMBEDDER",
    "llm": "RAMEM_LLM",
    "llm_threads": "RAMEM_LLM_THREADS",
    "timezone": "RAMEM_TIMEZONE",
}


class ConfigError(ValueError):
    """A config file or value that cannot be used; one readable line."""


@dataclass(frozen=True)
class Settings:
    db: str | None = None  # explicit bank file; wins over `bank`
    bank: str = DEFAULT_BANK  # a named bank under the user data dir
    models_dir: str | None = None
    embedder: str | None = None  # registry name or model folder
    llm: str | None = None  # registry name or GGUF path
    llm_threads: int | None = None  # None: the physical cores
    timezone: str | None = None  # for new banks; existing banks keep theirs
    k: int = 10
    buffer_days: float = 5.0
    mode: str = "ramem"

    def bank_path(self) -> Path:
        if self.db:
            return Path(self.db).expanduser()
        return banks_dir() / f"{self.bank}.db"

    def with_overrides(self, **values: Any) -> Settings:
        return replace(self, **{k: v for k, v in values.items() if v is not None})


def banks_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP)) / "banks"


def config_path() -> Path:
    explicit = os.environ.get("RAMEM_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    return Path(platformdirs.user_config_dir(APP)) / "config.json"


def read_config_file(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"config file {path} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a JSON object")
    known = {f.name for f in fields(Settings)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(
            f"config file {path}: unknown keys {', '.join(unknown)} "
            f"(known: {', '.join(sorted(known))})"
        )
    return data


def load_settings(**flags: Any) -> Settings:
    """Defaults, then the config file, then the environment, then the given flags."""
    settings = Settings().with_overrides(**read_config_file(config_path()))
    from_env: dict[str, Any] = {
        key: os.environ[var] for key, var in ENVIRONMENT.items() if os.environ.get(var)
    }
    if "llm_threads" in from_env:
        try:
            from_env["llm_threads"] = int(from_env["llm_threads"])
        except ValueError:
            raise ConfigError("RAMEM_LLM_THREADS must be a whole number") from None
    return settings.with_overrides(**from_env).with_overrides(**flags)
