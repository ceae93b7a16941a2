"""Embedders' ONNX graphs as onnxruntime optimises them, kept in the user cache folder.

Creating an ``InferenceSession`` from an embedder's ``model.onnx`` parses the whole protobuf
(copying every weight), optimises the graph (fusing attention, layer norms, GELU) and prepacks
the MatMul weights: for MiniLM (90 MB) a quarter of a second of every one-off ``ramem search``,
the largest part of ``Memory.open``. onnxruntime can save the graph it optimised, with its
weights in a file beside it; a session of that saved graph, optimisations off (they are done),
is created in 0.43x the time and computes the same outputs bit for bit, the same fused graph
running the same kernels (MiniLM, scripts/probe_ort_session.py; results/bench-oneoff.txt).

The first session of a model is created from ``model.onnx`` and saves its optimised graph into
a scratch folder; that graph is loaded once and kept only if its output on a probe input equals
the live session's (within :data:`TOLERANCE`). A graph that fails the check is remembered as
such, so it is not built again at every open. Later sessions load the kept graph; one that does
not load is removed and built again.

An entry cannot go stale: its folder is named by a digest of what the saved graph depends on
(:func:`entry_key`): the model file's SHA-256, the size, times and inode of every other file in
its folder (an external-data file holds weights that model.onnx only names), the onnxruntime
version, the machine and the optimisation level. A changed model gets a new entry. Each entry
holds a copy of the weights (90 MB for MiniLM), so writing one removes the entries of the same
model file that no longer match it and those of model files that are gone. A cache folder that
cannot be written costs the time saved, nothing else.

The optimisation level is ``ORT_ENABLE_EXTENDED``, not ``ORT_ENABLE_ALL``: what ALL adds is
the NCHWc layout rewrite of convolutions, chosen for the CPU at hand, which a saved graph would
carry to another CPU; text encoders have no convolutions (MiniLM's graph is the same at both).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .jsonfile import write_cache_json
from .registry import cache_dir, file_sha256

TOLERANCE = 1e-6  # largest difference allowed between the saved graph's output and the model's
FORMAT = 1  # bumped when what an entry holds or how it is built changes
GRAPHS_FOLDER = "graphs"
GRAPH_FILE = "model.onnx"
WEIGHTS_FILE = "weights.bin"
MANIFEST_FILE = "entry.json"
SCRATCH_PREFIX = ".scratch-"
SCRATCH_MAX_AGE_SECONDS = 3600  # a scratch folder this old belongs to a process that died
LEVEL = "ORT_ENABLE_EXTENDED"
# Larger models load from their file as before: the first open holds the model's session and
# the saved graph's at once (two copies of the weights in memory), and the entry is a third copy.
MAX_MODEL_BYTES = 1 << 30

Probe = Callable[[Any], np.ndarray]


def session_options(threads: int, *, optimise: bool) -> Any:
    """The embedder's session options: ``optimise`` False for a graph saved already optimised."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = (getattr(ort.GraphOptimizationLevel, LEVEL) if optimise
                                        else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    options.log_severity_level = 3
    return options


def entry_key(model_path: Path) -> str:
    """The digest that names the cache entry of ``model_path`` (see the module docstring)."""
    import onnxruntime as ort

    model = Path(model_path).resolve()
    siblings = []
    for path in sorted(model.parent.iterdir()):
        if path != model and path.is_file():
            info = path.stat()
            siblings.append([path.name, info.st_size, info.st_mtime_ns, info.st_ctime_ns,
                             info.st_ino])
    facts = [FORMAT, str(model), file_sha256(model), siblings, ort.__version__,
             platform.machine(), LEVEL]
    return hashlib.sha256(json.dumps(facts).encode()).hexdigest()[:32]


def open_session(model_path: Path, threads: int, probe: Probe) -> Any:
    """A session of ``model_path``: from its cached optimised graph when there is one, else
    from the model file (saving the optimised graph for the next time, when it checks out).

    ``probe`` runs a session on a fixed input and returns an output to compare. Errors loading
    ``model_path`` itself are onnxruntime's, for the caller to word.
    """
    import onnxruntime as ort

    if _folder_bytes(model_path) > MAX_MODEL_BYTES:
        return _session(model_path, threads)
    key = entry_key(model_path)
    root = cache_dir() / GRAPHS_FOLDER
    entry = root / key
    manifest = _manifest(entry)
    if not manifest and entry.exists():  # a half-written entry (a full disk?): build it again
        shutil.rmtree(entry, ignore_errors=True)
    if manifest.get("usable") is True:
        try:
            return ort.InferenceSession(str(entry / GRAPH_FILE),
                                        sess_options=session_options(threads, optimise=False),
                                        providers=["CPUExecutionProvider"])
        except Exception:  # damaged or removed since: build it again below
            shutil.rmtree(entry, ignore_errors=True)
            manifest = {}
    if manifest:  # a graph that failed its check: the model file, as before
        return _session(model_path, threads)
    scratch = _scratch_folder(root)
    if scratch is None:  # the cache cannot be written
        return _session(model_path, threads)
    try:
        session = _session(model_path, threads, save_to=scratch / GRAPH_FILE)
    except Exception:  # saving failed (a full disk?) or the model does not load: try without
        shutil.rmtree(scratch, ignore_errors=True)
        return _session(model_path, threads)
    _keep(scratch, entry, _check(scratch, session, threads, probe, model_path))
    return session


def _session(model_path: Path, threads: int, save_to: Path | None = None) -> Any:
    import onnxruntime as ort

    options = session_options(threads, optimise=True)
    if save_to is not None:
        options.optimized_model_filepath = str(save_to)
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", WEIGHTS_FILE)
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    return ort.InferenceSession(str(model_path), sess_options=options,
                                providers=["CPUExecutionProvider"])


def _check(scratch: Path, session: Any, threads: int, probe: Probe,
           model_path: Path) -> dict[str, Any]:
    """The manifest of the graph saved in ``scratch``: usable when it loads and its output on
    the probe is the model's own (within TOLERANCE)."""
    import onnxruntime as ort

    manifest: dict[str, Any] = {"format": FORMAT, "source": str(Path(model_path).resolve()),
                                "onnxruntime": ort.__version__, "level": LEVEL,
                                "usable": False}
    try:
        saved = ort.InferenceSession(str(scratch / GRAPH_FILE),
                                     sess_options=session_options(threads, optimise=False),
                                     providers=["CPUExecutionProvider"])
        expected, got = probe(session), probe(saved)
    except Exception as exc:
        manifest["reason"] = f"{type(exc).__name__}: {str(exc).strip()[:200]}"
        return manifest
    difference = (float(np.max(np.abs(np.asarray(got, np.float64) - expected)))
                  if np.shape(got) == np.shape(expected) else float("inf"))
    manifest["max_difference"] = difference
    manifest["usable"] = bool(difference <= TOLERANCE)
    return manifest


def _keep(scratch: Path, entry: Path, manifest: dict[str, Any]) -> None:
    """Move the checked scratch folder to its entry (a graph that failed keeps only its
    manifest); then drop the entries this one replaces. Nothing here may fail an open."""
    if not manifest["usable"]:
        for name in (GRAPH_FILE, WEIGHTS_FILE):
            with contextlib.suppress(OSError):
                (scratch / name).unlink()
    write_cache_json(scratch / MANIFEST_FILE, manifest)
    try:
        os.rename(scratch, entry)  # atomic; fails if another process kept its entry first
    except OSError:
        shutil.rmtree(scratch, ignore_errors=True)
        return
    _prune(entry.parent, keep=entry.name, source=manifest["source"])


def _prune(root: Path, *, keep: str, source: str) -> None:
    """Remove the entries of ``source`` other than ``keep``, those of model files that are gone,
    and scratch folders left by processes that died."""
    now = time.time()
    with contextlib.suppress(OSError):
        for folder in root.iterdir():
            if folder.name == keep:
                continue
            if folder.name.startswith(SCRATCH_PREFIX):
                with contextlib.suppress(OSError):
                    if now - folder.stat().st_mtime > SCRATCH_MAX_AGE_SECONDS:
                        shutil.rmtree(folder, ignore_errors=True)
                continue
            recorded = _manifest(folder).get("source")
            if isinstance(recorded, str) and (recorded == source or not Path(recorded).exists()):
                shutil.rmtree(folder, ignore_errors=True)


def _folder_bytes(model_path: Path) -> int:
    """The model file and every other file beside it (its weights may be one of them)."""
    return sum(path.stat().st_size for path in Path(model_path).resolve().parent.iterdir()
               if path.is_file())


def _scratch_folder(root: Path) -> Path | None:
    try:
        root.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX, dir=root))
    except OSError:
        return None


def _manifest(entry: Path) -> dict[str, Any]:
    """An entry's manifest; {} when there is none (or it is unreadable, or of another format)."""
    try:
        manifest = json.loads((entry / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) and manifest.get("format") == FORMAT else {}
