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
cosine 0.70-0.92 and LoCoMo dev recall by 0.007-0.017. The cause is the input, not the weights:
a few channels of some MatMul inputs carry values far above the rest (in layers 6-10 the GELU
output that feeds the FFN's second MatMul reaches 22-41x its 99.9th percentile, at the
sentence's first and last tokens), so one uint8 scale for the tensor leaves the rest of it a
handful of levels. Those channels are few and the same from text to text. :func:`outlier_channels`
finds them on :data:`CHECK_SENTENCES` (max |x| > :data:`OUTLIER_RATIO` x the input's 99.9th
percentile) and :func:`split_matmul_inputs` multiplies them in float, apart from the int8 rest
(the mixed-precision split of LLM.int8(), with the channels fixed at install time).
Measured, 500 LoCoMo dev turns not among the check sentences, cosine to the float graph, speed
in one process on an idle machine (results/int8-embedders.txt):

=====================================================  ==========  ===========  ==============
all-mpnet-base-v2                                      min cosine  mean cosine  speed vs float
=====================================================  ==========  ===========  ==============
every MatMul int8                                      0.696       0.882        3.7x
the 5 MatMuls with a >16x input kept whole in float    0.958       0.988        2.8x
outlier channels (>4x) split off, float (used)         0.990       0.9966       3.0x
per-channel smoothing (SmoothQuant, alpha 0.5)         0.726       0.884        3.5x
=====================================================  ==========  ===========  ==============

Smoothing moves the outliers into the weights' rows, where one scale per output column then
has to cover them: worse here. all-MiniLM-L6-v2 with the split: min 0.983, mean 0.9957 (without
it 0.971 / 0.9923); its inputs have fewer outlier channels (6 of its 36 MatMuls are split).

The copy is a model of its own, ``NAME-int8``, with its own ``model.onnx`` and so its own
fingerprint: a bank built with one refuses the other (their vectors differ by about 1%).
It is checked before it is installed: the float and int8 graphs embed :data:`CHECK_SENTENCES`
and every pair of vectors must have cosine >= :data:`MIN_COSINE`, else nothing is installed.

The weights are 8-bit or 7-bit, whichever stays closer to the float graph *on this CPU*
(:data:`WEIGHT_BITS`): both copies are made and checked, and the closer one is installed.
onnxruntime multiplies uint8 inputs by int8 weights with VPMADDUBSW on x86 CPUs without VNNI
(AVX2 only: AMD Zen 1-3, Intel before Ice Lake), whose 16-bit sums of two products saturate
when both are large; 7-bit weights keep them in range (onnxruntime's ``reduce_range``). On a
CPU with VNNI the products are summed in 32 bits and the eighth bit is pure precision.
Measured: a tiny random BERT (tests) at cosine 0.901 with 8-bit weights on an AMD EPYC (AVX2),
0.9996 with 7-bit; all-mpnet-base-v2 there 0.9890 / 0.9884 (it keeps 8 bits, like the Xeon,
whose 8-bit copy checks at 0.9909). The copy a CPU chooses is the one it runs: a models folder
copied to a CPU of the other kind keeps working, with the other copy's rounding.

What int8 buys depends on the CPU as much: 3.0x float's speed for MPNet on the Xeon above, 1.0x on
the AMD EPYC (AVX2 only), whose VPMADDUBSW path multiplies about as fast as its float FMAs
(results/int8-embedders.txt). So the install times both graphs on the check sentences
(:func:`speed_ratio`) and says what this CPU gets; below :data:`LITTLE_GAIN` it says the float
model is as quick here.

Quantising happens here, at install time, only; nothing on the search path imports this module
(``onnx`` and ``onnxruntime.quantization`` are install-time dependencies).
"""

from __future__ import annotations

import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
# Measured with the outlier split: the lowest over all 2,760 LoCoMo dev turns is 0.971 (MiniLM)
# and 0.989 (MPNet); the check sentences give 0.980-0.997 (MiniLM) and 0.991-0.998 (MPNet), lowest
# on "ok". Without the split MiniLM's "ok" was 0.968; per-tensor weights fall to 0.86 on "ok".
# 0.95 lets the measured recipe through on short, odd texts and stops a graph that quantised
# badly (a wrong scale, a layer whose weights do not fit 8 bits) before any bank uses it.
MIN_COSINE = 0.95

# A channel of a MatMul's input whose largest |value| exceeds this many times the 99.9th
# percentile of |input| is multiplied in float. Measured on MPNet (module docstring): 6x gave min
# / mean cosine 0.984 / 0.9953 at 3.05x float's speed, 4x 0.990 / 0.9966 at 3.0x, 3x 0.9925 /
# 0.9973 at 2.7x (more channels, more float work).
OUTLIER_RATIO = 4.0

# The widths tried for the MatMul weights, first the one kept on a tie (module docstring).
WEIGHT_BITS = (8, 7)

# :func:`speed_ratio`: the check sentences are embedded SPEED_REPEAT times per call (a batch
# like an ingest's), best of SPEED_ROUNDS calls per graph, the graphs taking turns.
SPEED_REPEAT = 4
SPEED_ROUNDS = 3
# Below this ratio the install says the int8 copy gains little on this CPU: measured 1.01x
# (MPNet) and 1.09x (MiniLM) ingest on an AVX2-only EPYC against 1.8x-3.0x with VNNI.
LITTLE_GAIN = 1.25

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
    float_matmuls: int  # thin float MatMuls for outlier input channels (or whole ones)
    weight_bits: int  # 8, or 7 where this CPU's int8 kernels saturate 8-bit products
    float_bytes: int
    int8_bytes: int
    speedup: float  # float's time over int8's on the check sentences, on this CPU


def int8_name(name: str) -> str:
    """The name of the int8 copy of embedder ``name``."""
    return name + INT8_SUFFIX


def quantize_embedder(float_name: str, float_folder: Path, models_dir: Path,
                      min_cosine: float | None = None) -> QuantizedEmbedder:
    """Write ``models_dir/NAME-int8``: the files of the installed float embedder ``float_folder``
    with its ``model.onnx`` quantised; check it against the float graph; record it in the ledger.

    The weights take the width of :data:`WEIGHT_BITS` whose copy stays closest to the float
    graph on this CPU. Refuses (ModelError, nothing installed, an earlier copy kept) a folder
    without a single-file ``model.onnx`` and a copy whose vectors drift below ``min_cosine``
    (default :data:`MIN_COSINE`). Installing again replaces the copy."""
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
        kept = split_outlier_channels(float_folder, float_name, named)
        bits, lowest = quantize_closest(named, work, float_folder, float_name, kept,
                                        MIN_COSINE if min_cosine is None else min_cosine)
        named.unlink()
        speedup = speed_ratio(float_folder, work, float_name)
        if target.exists():
            shutil.rmtree(target)
        os.replace(work, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    files = sorted(p for p in target.rglob("*") if p.is_file())
    record_install(models_dir, name, EMBEDDER,
                   [(p, sha256_file(p), p.stat().st_size) for p in files],
                   source=f"int8:{float_name} (onnxruntime quantize_dynamic, MatMul weights "
                          f"QInt8 per channel, {bits}-bit, {len(kept)} float MatMuls for "
                          f"outlier input channels; lowest check cosine {lowest:.4f})")
    return QuantizedEmbedder(name, target, lowest, len(kept), bits, source.stat().st_size,
                             (target / EMBEDDER_MODEL_FILE).stat().st_size, speedup)


def quantize_closest(named: Path, work: Path, float_folder: Path, name: str, keep_float: list[str],
                     min_cosine: float) -> tuple[int, float]:
    """Write ``work/model.onnx`` quantised with each width of :data:`WEIGHT_BITS` in turn and
    keep the one whose lowest cosine to the float graph on :data:`CHECK_SENTENCES` is highest
    (the first on a tie); its width and that cosine. ModelError (naming the sentence) when
    even that one is below ``min_cosine``."""
    reference = embed_check_sentences(float_folder, name)
    best: tuple[int, float, int] | None = None  # bits, lowest cosine, its sentence
    for bits in WEIGHT_BITS:
        quantize_graph(named, work / EMBEDDER_MODEL_FILE, keep_float=keep_float,
                       reduce_range=bits < 8)
        lowest, sentence = lowest_cosine(reference, embed_check_sentences(work, name))
        if best is None or lowest > best[1]:
            best = (bits, lowest, sentence)
            os.replace(work / EMBEDDER_MODEL_FILE, work / "model-best.onnx")
    assert best is not None
    os.replace(work / "model-best.onnx", work / EMBEDDER_MODEL_FILE)
    bits, lowest, sentence = best
    if lowest < min_cosine:
        raise ModelError(
            f"{name}: the int8 graph drifts from the float one (cosine {lowest:.4f} < "
            f"{min_cosine} on {CHECK_SENTENCES[sentence]!r}); nothing was installed, use the float "
            f"model")
    return bits, lowest


def split_outlier_channels(float_folder: Path, name: str, target: Path) -> list[str]:
    """Write the float graph to ``target`` with every node named (the quantiser excludes nodes
    by name; the converter leaves them unnamed) and the outlier channels of each MatMul's input
    (:func:`outlier_channels`, measured on :data:`CHECK_SENTENCES`) split off into a float
    MatMul (:func:`split_matmul_inputs`). The names of the MatMuls to keep float."""
    import onnx

    model = onnx.load(str(float_folder / EMBEDDER_MODEL_FILE))
    for index, node in enumerate(model.graph.node):
        if not node.name:
            node.name = f"{node.op_type}_{index}"
    weights = {tensor.name for tensor in model.graph.initializer}
    matmuls = [n for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in weights]
    inputs = list(dict.fromkeys(n.input[0] for n in matmuls))
    values, real = _run_with_outputs(model, float_folder, name, inputs)
    channels = {i: outlier_channels(values[i], real) for i in inputs}
    keep_float = split_matmul_inputs(model, {i: c for i, c in channels.items() if len(c)})
    onnx.save(model, str(target))
    return keep_float


def _run_with_outputs(model: Any, float_folder: Path, name: str,
                      tensors: list[str]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The values of the inner ``tensors`` of ``model`` on :data:`CHECK_SENTENCES`, and the
    mask of real (not padding) tokens."""
    import onnx
    import onnxruntime as ort

    from .embedder import OnnxEmbedder, spec_from_folder
    from .loading import settings_for

    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    known = {o.name for o in probe.graph.output}
    probe.graph.output.extend(onnx.helper.make_tensor_value_info(t, onnx.TensorProto.FLOAT, None)
                              for t in tensors if t not in known)
    embedder = OnnxEmbedder(spec_from_folder(float_folder, name=name,
                                             registry_entry=settings_for(name)))
    feeds, mask = embedder.feeds(CHECK_SENTENCES)
    session = ort.InferenceSession(probe.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    return dict(zip(tensors, session.run(tensors, feeds), strict=True)), mask.astype(bool)


def outlier_channels(value: np.ndarray, real: np.ndarray) -> np.ndarray:
    """The channels (last axis) of a MatMul input ``value`` whose largest |x| over real tokens
    exceeds :data:`OUTLIER_RATIO` x the 99.9th percentile of |x| over the whole input.

    ``real`` masks the padding out when ``value`` is ``[batch, seq, channels]`` like it."""
    values = np.abs(value[real] if value.shape[:2] == real.shape else value)
    values = values.reshape(-1, values.shape[-1])
    threshold = OUTLIER_RATIO * max(float(np.percentile(values, 99.9)), 1e-12)
    return np.flatnonzero(values.max(axis=0) > threshold)


def split_matmul_inputs(model: Any, outliers: dict[str, np.ndarray]) -> list[str]:
    """Rewrite ``model`` in place so that ``X @ W``, for each input ``X`` in ``outliers``, is
    ``(X * mask) @ W' + X[..., C] @ W[C]``: ``C`` the outlier channels, ``mask`` zero on them,
    ``W'`` the weight with their rows zeroed. The first product is left for the quantiser, whose
    one scale per input then fits the ordinary values; the second is a thin float MatMul. The
    result is the float graph's (to rounding). An input whose channels are mostly outliers
    keeps its MatMuls whole and float. The names of the MatMuls to keep float."""
    from onnx import helper, numpy_helper

    weights = {tensor.name: tensor for tensor in model.graph.initializer}
    keep_float: list[str] = []
    for tensor, channels in outliers.items():
        users = [n for n in model.graph.node
                 if n.op_type == "MatMul" and n.input[0] == tensor and n.input[1] in weights]
        width = numpy_helper.to_array(weights[users[0].input[1]]).shape[0]
        if 2 * len(channels) > width:
            keep_float += [n.name for n in users]
            continue
        mask = np.ones(width, dtype=np.float32)
        mask[channels] = 0.0
        ordinary, picked = f"{tensor}_ordinary", f"{tensor}_outliers"
        model.graph.initializer.extend([
            numpy_helper.from_array(mask, f"{tensor}_ordinary_mask"),
            numpy_helper.from_array(channels.astype(np.int64), f"{tensor}_outlier_channels")])
        _insert(model, list(model.graph.node).index(users[0]), [
            helper.make_node("Mul", [tensor, f"{tensor}_ordinary_mask"], [ordinary],
                             name=f"{tensor}_ordinary"),
            helper.make_node("Gather", [tensor, f"{tensor}_outlier_channels"], [picked],
                             axis=-1, name=f"{tensor}_outliers")])
        for node in users:
            weight = numpy_helper.to_array(weights[node.input[1]])
            rows = f"{node.input[1]}_outlier_rows"
            model.graph.initializer.append(numpy_helper.from_array(weight[channels], rows))
            zeroed = weight.copy()
            zeroed[channels] = 0.0
            weights[node.input[1]].CopyFrom(numpy_helper.from_array(zeroed, node.input[1]))
            output = node.output[0]
            node.input[0], node.output[0] = ordinary, f"{output}_ordinary"
            _insert(model, list(model.graph.node).index(node) + 1, [
                helper.make_node("MatMul", [picked, rows], [f"{output}_outliers"],
                                 name=f"{node.name}_outliers"),
                helper.make_node("Add", [f"{output}_ordinary", f"{output}_outliers"], [output],
                                 name=f"{node.name}_sum")])
            keep_float.append(f"{node.name}_outliers")
    return keep_float


def _insert(model: Any, at: int, new: list[Any]) -> None:
    """Put the ``new`` nodes at position ``at`` of the graph, in order (the graph stays sorted
    for the quantiser's shape inference)."""
    for offset, added in enumerate(new):
        model.graph.node.insert(at + offset, added)


def quantize_graph(source: Path, target: Path, keep_float: list[str] | None = None,
                   reduce_range: bool = False) -> None:
    """MatMul weights to int8, one scale per output channel (see the module's table), but for
    the nodes named in ``keep_float``; in 7 bits with ``reduce_range`` (module docstring)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantizer_log = logging.getLogger()  # it warns on the root logger about pre-processing
    level = quantizer_log.level
    quantizer_log.setLevel(logging.ERROR)
    try:
        quantize_dynamic(str(source), str(target), op_types_to_quantize=["MatMul"],
                         weight_type=QuantType.QInt8, per_channel=True,
                         reduce_range=reduce_range, nodes_to_exclude=keep_float or [])
    except Exception as exc:  # onnx / onnxruntime raise many types for a graph they reject
        raise ModelError(f"cannot quantise {source}: {str(exc).strip().splitlines()[0]}") from None
    finally:
        quantizer_log.setLevel(level)


def embed_check_sentences(folder: Path, name: str) -> np.ndarray:
    """The vectors of :data:`CHECK_SENTENCES` from the embedder in ``folder`` (``name``'s
    registry settings)."""
    from .embedder import OnnxEmbedder, spec_from_folder
    from .loading import settings_for

    embedder = OnnxEmbedder(spec_from_folder(folder, name=name, registry_entry=settings_for(name)))
    return embedder.embed_documents(list(CHECK_SENTENCES)).astype(np.float64)


def speed_ratio(float_folder: Path, int8_folder: Path, name: str) -> float:
    """How many times faster the int8 graph in ``int8_folder`` embeds the check sentences
    than the float one in ``float_folder``, on this CPU: each embeds them once to warm up,
    then :data:`SPEED_ROUNDS` times in turn, and the best time of each counts (a busy moment
    slows one call, not the best)."""
    import time

    from .embedder import OnnxEmbedder, spec_from_folder
    from .loading import settings_for

    texts = list(CHECK_SENTENCES) * SPEED_REPEAT
    graphs = [OnnxEmbedder(spec_from_folder(folder, name=name, registry_entry=settings_for(name)))
              for folder in (float_folder, int8_folder)]
    best = [float("inf")] * len(graphs)
    for graph in graphs:
        graph.embed_documents(texts)
    for _ in range(SPEED_ROUNDS):
        for index, graph in enumerate(graphs):
            started = time.perf_counter()
            graph.embed_documents(texts)
            best[index] = min(best[index], time.perf_counter() - started)
    return best[0] / max(best[1], 1e-9)


def lowest_cosine(a: np.ndarray, b: np.ndarray) -> tuple[float, int]:
    """The lowest cosine between the rows of ``a`` and ``b`` pairwise, and its row."""
    cosines = (a * b).sum(axis=1) / np.maximum(
        np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-12)
    worst = int(np.argmin(cosines))
    return float(cosines[worst]), worst
