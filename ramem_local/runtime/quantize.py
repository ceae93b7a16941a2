"""int8 copies of installed ONNX embedders (``ramem models install|import --int8``).

onnxruntime's dynamic quantisation stores MatMul weights as int8, one scale per output channel,
and quantises each MatMul's input per call to uint8 with one scale for the whole tensor; the
word-embedding table (a Gather) stays float. Measured on this project's 2-core Xeon (AVX-512
VNNI), all-MiniLM-L6-v2, 500 LoCoMo turns, against the float graph (results/int8-embedders.txt):

=========================  ================  ==========  ===========
weights                    turns/s vs float  min cosine  mean cosine
=========================  ================  ==========  ===========
QInt8, per channel (used)  about 2x          0.971       0.9923
QUInt8, per channel        about 1x          0.984       0.9925
QInt8, per tensor          about 2x          0.896       0.9537
=========================  ================  ==========  ===========

Unsigned weights take a slower kernel here; one scale per tensor loses a third of the precision.
So: signed, per channel. That alone is not enough for all-mpnet-base-v2: its vectors fell to
cosine 0.80-0.92 and LoCoMo dev recall by 0.007-0.017. The cause is the input, not the weights:
in layers 6-10 the GELU output that feeds the FFN's second MatMul has a few values 22-41x its
99.9th percentile, so one uint8 scale for the tensor leaves the rest of it a handful of levels.
:func:`outlier_matmuls` runs the float graph on :data:`CHECK_SENTENCES` and keeps every MatMul
whose input has such outliers (max |x| > :data:`OUTLIER_RATIO` x the 99.9th percentile) in
float: 5 of MPNet's 72 (cosine >= 0.99 again), none of MiniLM's (its largest ratio is 10.5, MPNet's
other inputs are <= 11.2).

The copy is a model of its own, ``NAME-int8``, with its own ``model.onnx`` and so its own
fingerprint: a bank built with one refuses the other (their vectors differ by about 1%).
It is checked before it is installed: the float and int8 graphs embed :data:`CHECK_SENTENCES`
and every pair of vectors must have cosine >= :data:`MIN_COSINE`, else nothing is installed.

Quantising happens here, at install time, only; nothing on the search path imports this module
(``onnx`` and ``onnxruntime.quantization`` are install-time dependencies).
"""

from __future__ import annotations

import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .registry import (
    EMBEDDER,
    EMBEDDER_MODEL_FILE,
    INT8_SUFFIX,
    ModelError,
    record_install,
    sha256_file,
)

# The lowest cosine between float and int8 vectors of one check sentence that installs the copy.
# Measured: 0.971 is the lowest over 500 LoCoMo turns for MiniLM (QInt8 per channel); the check
# sentences give 0.968-0.995 (MiniLM) and 0.974-0.992 (MPNet), lowest on "ok"; per-tensor weights
# fall to 0.86 on "ok" and 0.90 on some turns.
# 0.95 lets the measured recipe through on short, odd texts and stops a graph that quantised
# badly (a wrong scale, a layer whose weights do not fit 8 bits) before any bank uses it.
MIN_COSINE = 0.95

# A MatMul whose input's largest |value| exceeds this many times the 99.9th percentile of |input|
# stays float (see the module docstring for the measured ratios).
OUTLIER_RATIO = 16.0

# Short and long, questions and statements, names, dates and numbers: the texts a memory bank
# embeds. Fixed, so a check is repeatable.
CHECK_SENTENCES = (
    "We hiked up to Eagle Lake on Saturday with Caroline and her dog.",
    "What did I cook the day after I adopted Pixel the cat?",
    "ok",
    "The quarterly report is due on 3 March 2024; Ben will send the numbers by Friday.",
    "I started reading a novel about a lighthouse keeper on a remote Scottish island.",
    "When did I last see the Velvet Tides live?",
    "Doctor's appointment moved to 9:30, bring the insurance card and the blood test results.",
    "Melanie painted a sunrise over the lake last year and is proud of it.",
)


@dataclass(frozen=True)
class QuantizedEmbedder:
    """What :func:`quantize_embedder` installed, and how close it stayed to the float graph."""

    name: str
    path: Path
    lowest_cosine: float
    kept_float: int  # MatMuls left in float for outliers in their input
    float_bytes: int
    int8_bytes: int


def int8_name(name: str) -> str:
    """The name of the int8 copy of embedder ``name``."""
    return name + INT8_SUFFIX


def quantize_embedder(float_name: str, float_folder: Path, models_dir: Path,
                      min_cosine: float | None = None) -> QuantizedEmbedder:
    """Write ``models_dir/NAME-int8``: the files of the installed float embedder ``float_folder``
    with its ``model.onnx`` quantised; check it against the float graph; record it in the ledger.

    Refuses (ModelError, nothing installed, an earlier copy kept) a folder without a single-file
    ``model.onnx`` and a copy whose vectors drift below ``min_cosine`` (default
    :data:`MIN_COSINE`). Installing again replaces the copy."""
    float_folder = Path(float_folder)
    source = float_folder / EMBEDDER_MODEL_FILE
    if not source.is_file():
        raise ModelError(f"{float_name}: no {EMBEDDER_MODEL_FILE} in {float_folder} to quantise")
    if any(p.name.endswith(".onnx_data") or p.suffix == ".data" for p in float_folder.rglob("*")):
        raise ModelError(f"{float_name}: its weights live beside the graph (external data); "
                         "quantising such a model is not supported, nothing was installed")
    name = int8_name(float_name)
    models_dir = Path(models_dir)
    target = models_dir / name
    work = models_dir / f".{name}.quantizing"
    shutil.rmtree(work, ignore_errors=True)
    try:
        shutil.copytree(float_folder, work, ignore=shutil.ignore_patterns(EMBEDDER_MODEL_FILE))
        named = work / "float-named.onnx"
        kept = outlier_matmuls(float_folder, float_name, named)
        quantize_graph(named, work / EMBEDDER_MODEL_FILE, keep_float=kept)
        named.unlink()
        lowest = check_against_float(float_folder, work, float_name,
                                     MIN_COSINE if min_cosine is None else min_cosine)
        if target.exists():
            shutil.rmtree(target)
        os.replace(work, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    files = sorted(p for p in target.rglob("*") if p.is_file())
    record_install(models_dir, name, EMBEDDER,
                   [(p, sha256_file(p), p.stat().st_size) for p in files],
                   source=f"int8:{float_name} (onnxruntime quantize_dynamic, MatMul weights "
                          f"QInt8 per channel, {len(kept)} kept float for input outliers; "
                          f"lowest check cosine {lowest:.4f})")
    return QuantizedEmbedder(name, target, lowest, len(kept), source.stat().st_size,
                             (target / EMBEDDER_MODEL_FILE).stat().st_size)


def outlier_matmuls(float_folder: Path, name: str, named: Path) -> list[str]:
    """Write the float graph to ``named`` with every node named (the quantiser excludes nodes
    by name; the converter leaves them unnamed), run it on :data:`CHECK_SENTENCES`, and return
    the names of the MatMuls with a constant weight whose input has outliers (max |x| >
    :data:`OUTLIER_RATIO` x its 99.9th percentile, over real tokens only)."""
    import onnx
    import onnxruntime as ort

    from .embedder import OnnxEmbedder, spec_from_folder
    from .loading import settings_for

    model = onnx.load(str(float_folder / EMBEDDER_MODEL_FILE))
    for index, node in enumerate(model.graph.node):
        if not node.name:
            node.name = f"{node.op_type}_{index}"
    onnx.save(model, str(named))
    weights = {tensor.name for tensor in model.graph.initializer}
    matmuls = [n for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in weights]
    inputs = list(dict.fromkeys(n.input[0] for n in matmuls))
    known = {o.name for o in model.graph.output}
    model.graph.output.extend(onnx.helper.make_tensor_value_info(i, onnx.TensorProto.FLOAT, None)
                              for i in inputs if i not in known)
    embedder = OnnxEmbedder(spec_from_folder(float_folder, name=name,
                                             registry_entry=settings_for(name)))
    feeds, mask = embedder.feeds(CHECK_SENTENCES)
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    real = mask.astype(bool)
    ratios = {}
    for input_name, value in zip(inputs, session.run(inputs, feeds), strict=True):
        values = np.abs(value[real] if value.shape[:2] == real.shape else value.ravel())
        ratios[input_name] = float(values.max() / max(np.percentile(values, 99.9), 1e-12))
    return [n.name for n in matmuls if ratios[n.input[0]] > OUTLIER_RATIO]


def quantize_graph(source: Path, target: Path, keep_float: list[str] | None = None) -> None:
    """MatMul weights to int8, one scale per output channel (see the module's table), but for
    the nodes named in ``keep_float``."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantizer_log = logging.getLogger()  # it warns on the root logger about pre-processing
    level = quantizer_log.level
    quantizer_log.setLevel(logging.ERROR)
    try:
        quantize_dynamic(str(source), str(target), op_types_to_quantize=["MatMul"],
                         weight_type=QuantType.QInt8, per_channel=True,
                         nodes_to_exclude=keep_float or [])
    except Exception as exc:  # onnx / onnxruntime raise many types for a graph they reject
        raise ModelError(f"cannot quantise {source}: {str(exc).strip().splitlines()[0]}") from None
    finally:
        quantizer_log.setLevel(level)


def check_against_float(float_folder: Path, int8_folder: Path, name: str,
                        min_cosine: float) -> float:
    """Embed :data:`CHECK_SENTENCES` with both graphs; the lowest cosine, or ModelError below
    ``min_cosine`` (naming the sentence)."""
    from .embedder import OnnxEmbedder, spec_from_folder
    from .loading import settings_for

    entry = settings_for(name)
    vectors = []
    for folder in (float_folder, int8_folder):
        embedder = OnnxEmbedder(spec_from_folder(folder, name=name, registry_entry=entry))
        vectors.append(embedder.embed_documents(list(CHECK_SENTENCES)).astype(np.float64))
    a, b = vectors
    cosines = (a * b).sum(axis=1) / np.maximum(
        np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-12)
    worst = int(np.argmin(cosines))
    lowest = float(cosines[worst])
    if lowest < min_cosine:
        raise ModelError(
            f"{name}: the int8 graph drifts from the float one (cosine {lowest:.4f} < "
            f"{min_cosine} on {CHECK_SENTENCES[worst]!r}); nothing was installed, use the float "
            f"model")
    return lowest
