"""Build an ONNX graph for a BERT-family encoder from its safetensors weights — without torch.

Air-gapped users can usually get a model folder in the sentence-transformers / Hugging Face
layout (``config.json``, ``model.safetensors``, ``tokenizer.json``, ``1_Pooling/config.json``,
``modules.json``) but not an ONNX export, and converting one normally needs torch. A BERT
encoder is a short, fixed stack of matrix products, so we write its graph ourselves with
``onnx.helper`` and check it against :func:`reference_forward`, the same computation in numpy.

Three variants of the stack are written out, following Hugging Face's implementations:

* ``bert``: absolute positions ``0 .. seq - 1`` and token-type embeddings.
* ``roberta`` / ``xlm-roberta``: the BERT layers, but positions counted over the real tokens
  and offset past the padding row (``cumsum(mask) * mask + pad_token_id``).
* ``mpnet``: RoBERTa's positions, no token-type embeddings, differently named tensors, and one
  T5-style relative attention bias (``encoder.relative_attention_bias``, ``[buckets, heads]``)
  shared by every layer and added to the scaled attention scores.

The graph takes ``input_ids``, ``attention_mask`` and (except MPNet) ``token_type_ids``
``[batch, seq]`` (int64) and returns ``last_hidden_state`` ``[batch, seq, hidden]``: the layout
of the usual exports, so :class:`~ramem_local.runtime.embedder.OnnxEmbedder` pools it as it
pools them (it feeds only the inputs a graph declares).
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .jsonfile import read_json
from .registry import ModelError

SUPPORTED_MODEL_TYPES = ("bert", "roberta", "xlm-roberta", "mpnet")
# Model types whose positions count the real tokens from ``padding_idx + 1`` (RoBERTa's scheme).
COUNTED_POSITION_TYPES = ("roberta", "xlm-roberta", "mpnet")
# Hugging Face's MPNet: its embeddings hard-code padding row 1, and MPNetEncoder buckets relative
# positions with the defaults of ``relative_position_bucket`` (32 buckets, max distance 128)
# whatever config.json says; a table of another size would be read differently.
MPNET_PADDING_IDX = 1
MPNET_RELATIVE_BUCKETS = 32
MPNET_RELATIVE_MAX_DISTANCE = 128
OPSET = 17  # LayerNormalization is an ONNX op from opset 17
IR_VERSION = 8  # opset 17's IR version: loads in every onnxruntime that knows opset 17
WEIGHTS_FILE = "model.safetensors"
EXTERNAL_DATA_BYTES = 1 << 30
CONFIG_FILE = "config.json"
TOKENIZER_FILE = "tokenizer.json"
# The sentence-transformers files that say how the hidden states become one vector; copied
# as they are (the runtime reads pooling, maximum length and normalisation from them).
SENTENCE_TRANSFORMERS_FILES = (
    "modules.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "1_Pooling/config.json",
    "pooling_config.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
)
# What the converted graph must reproduce: largest |difference| of the hidden states from the
# numpy forward pass, and the cosine of every pooled vector.
MAX_HIDDEN_DIFFERENCE = 1e-3
MIN_COSINE = 0.9999
VERIFY_SENTENCES = (
    "We hiked up to the lake on Saturday and came back soaked.",
    "What did Caroline paint last summer?",
    "ok",
    "The quarterly report is due on 3 March; Ben will send the numbers by Friday.",
)
_GELU_KINDS = {"gelu": "erf", "gelu_new": "tanh", "gelu_pytorch_tanh": "tanh",
               "gelu_fast": "tanh", "relu": "relu"}  # fmt: skip


@dataclass(frozen=True)
class BertConfig:
    """The fields of a Hugging Face ``config.json`` that decide a BERT-family encoder's forward
    pass (BERT, RoBERTa, XLM-R, MPNet)."""

    hidden_size: int
    num_layers: int
    num_heads: int
    intermediate_size: int
    vocab_size: int
    max_positions: int
    type_vocab_size: int
    layer_norm_eps: float
    activation: str  # "erf", "tanh" or "relu"
    model_type: str = "bert"
    padding_idx: int = 0  # the position row before the first counted position (RoBERTa, MPNet)
    relative_buckets: int = 0  # MPNet's relative attention bias (0: none)
    relative_max_distance: int = MPNET_RELATIVE_MAX_DISTANCE

    @property
    def head_size(self) -> int:
        return self.hidden_size // self.num_heads

    @property
    def counts_positions(self) -> bool:
        """Positions ``padding_idx + 1, + 2, ...`` over the real tokens (else ``0 .. seq - 1``)."""
        return self.model_type in COUNTED_POSITION_TYPES

    @property
    def has_token_types(self) -> bool:
        return self.model_type != "mpnet"

    @property
    def longest_input(self) -> int:
        """The most tokens the position table has rows for."""
        if self.counts_positions:
            return self.max_positions - self.padding_idx - 1
        return self.max_positions

    @classmethod
    def from_file(cls, path: Path) -> BertConfig:
        config = read_json(path)
        if not isinstance(config, dict):
            raise ModelError(f"{path} does not hold a JSON object")
        return cls.from_dict(config, path)

    @classmethod
    def from_dict(cls, config: dict[str, Any], path: Path | str = CONFIG_FILE) -> BertConfig:
        model_type = str(config.get("model_type", "")).lower()
        if model_type not in SUPPORTED_MODEL_TYPES:
            architectures = ", ".join(config.get("architectures") or []) or "no architecture"
            raise ModelError(
                f"{path}: model_type {model_type or 'missing'!r} ({architectures}) cannot be "
                f"converted; supported: BERT-family encoders (model_type "
                f"{', '.join(SUPPORTED_MODEL_TYPES)}: BERT, MiniLM, BGE, E5, GTE, RoBERTa, "
                "XLM-R, MPNet). Decoder embedders such as Qwen3-Embedding need an ONNX export "
                "(`ramem models pull`)."
            )
        position_type = config.get("position_embedding_type", "absolute")
        if position_type != "absolute":
            raise ModelError(f"{path}: position_embedding_type {position_type!r} is not "
                             "supported (only 'absolute')")
        activation = str(config.get("hidden_act", "gelu"))
        if activation not in _GELU_KINDS:
            raise ModelError(f"{path}: hidden_act {activation!r} is not supported "
                             f"(supported: {', '.join(_GELU_KINDS)})")
        try:
            values = cls(
                hidden_size=int(config["hidden_size"]),
                num_layers=int(config["num_hidden_layers"]),
                num_heads=int(config["num_attention_heads"]),
                intermediate_size=int(config["intermediate_size"]),
                vocab_size=int(config["vocab_size"]),
                max_positions=int(config.get("max_position_embeddings", 512)),
                type_vocab_size=int(config.get("type_vocab_size", 2)),
                layer_norm_eps=float(config.get("layer_norm_eps", 1e-12)),
                activation=_GELU_KINDS[activation],
                model_type=model_type,
                **_position_fields(model_type, config, path),
            )
        except KeyError as exc:
            raise ModelError(f"{path}: missing {exc.args[0]!r}") from None
        except (TypeError, ValueError) as exc:
            raise ModelError(f"{path}: {exc}") from None
        if values.num_heads < 1 or values.hidden_size % values.num_heads:
            raise ModelError(f"{path}: hidden_size {values.hidden_size} is not a multiple of "
                             f"num_attention_heads {values.num_heads}")
        if values.longest_input < 1:
            raise ModelError(f"{path}: max_position_embeddings {values.max_positions} leaves "
                             f"no position after padding row {values.padding_idx}")
        return values


def _position_fields(model_type: str, config: dict[str, Any], path: Path | str) -> dict[str, int]:
    """``padding_idx`` and the relative attention bias's bucketing, as Hugging Face reads them."""
    if model_type == "mpnet":
        buckets = int(config.get("relative_attention_num_buckets", MPNET_RELATIVE_BUCKETS))
        if buckets != MPNET_RELATIVE_BUCKETS:
            raise ModelError(
                f"{path}: relative_attention_num_buckets {buckets} is not supported: Hugging "
                f"Face's MPNet buckets relative positions into {MPNET_RELATIVE_BUCKETS} whatever "
                "the config says, so this checkpoint's table would be read inconsistently")
        return {"padding_idx": MPNET_PADDING_IDX, "relative_buckets": buckets}
    if model_type in COUNTED_POSITION_TYPES:
        return {"padding_idx": int(config.get("pad_token_id", 1))}
    return {}


# --------------------------------------------------------------------------- weights


def _layer_names(layer: int, config: BertConfig) -> dict[str, str]:
    """Our short names → Hugging Face names of one encoder layer's tensors."""
    base = f"encoder.layer.{layer}."
    if config.model_type == "mpnet":
        return _mpnet_layer_names(base)
    return {
        "q.w": base + "attention.self.query.weight", "q.b": base + "attention.self.query.bias",
        "k.w": base + "attention.self.key.weight", "k.b": base + "attention.self.key.bias",
        "v.w": base + "attention.self.value.weight", "v.b": base + "attention.self.value.bias",
        "o.w": base + "attention.output.dense.weight", "o.b": base + "attention.output.dense.bias",
        "ln1.w": base + "attention.output.LayerNorm.weight",
        "ln1.b": base + "attention.output.LayerNorm.bias",
        "up.w": base + "intermediate.dense.weight", "up.b": base + "intermediate.dense.bias",
        "down.w": base + "output.dense.weight", "down.b": base + "output.dense.bias",
        "ln2.w": base + "output.LayerNorm.weight", "ln2.b": base + "output.LayerNorm.bias",
    }  # fmt: skip


def _mpnet_layer_names(base: str) -> dict[str, str]:
    """MPNetLayer: the attention projections live in ``attention.attn.{q,k,v,o}``."""
    names = {f"{key}.{kind}": f"{base}attention.attn.{key}.{suffix}"
             for key in ("q", "k", "v", "o") for kind, suffix in (("w", "weight"), ("b", "bias"))}
    names.update({
        "ln1.w": base + "attention.LayerNorm.weight", "ln1.b": base + "attention.LayerNorm.bias",
        "up.w": base + "intermediate.dense.weight", "up.b": base + "intermediate.dense.bias",
        "down.w": base + "output.dense.weight", "down.b": base + "output.dense.bias",
        "ln2.w": base + "output.LayerNorm.weight", "ln2.b": base + "output.LayerNorm.bias",
    })  # fmt: skip
    return names


EMBEDDING_NAMES = {
    "word": "embeddings.word_embeddings.weight",
    "position": "embeddings.position_embeddings.weight",
    "token_type": "embeddings.token_type_embeddings.weight",
    "ln.w": "embeddings.LayerNorm.weight",
    "ln.b": "embeddings.LayerNorm.bias",
}
RELATIVE_ATTENTION_BIAS = "encoder.relative_attention_bias.weight"
# Prefixes of checkpoints saved with a head (``BertForMaskedLM``, ``MPNetForMaskedLM``, ...).
HEAD_PREFIXES = ("", "bert.", "roberta.", "mpnet.", "model.")


def load_weights(path: Path, config: BertConfig) -> dict[str, np.ndarray]:
    """The encoder's tensors as float32, keyed by Hugging Face name without any head prefix.

    A checkpoint saved from ``BertForMaskedLM`` and the like prefixes every name with
    ``bert.`` (``roberta.``, ``mpnet.``); heads (pooler, MLM) are ignored. Shapes are checked
    against ``config``. float16 and bfloat16 weights are widened to float32 (the graph computes
    in float32)."""
    import ml_dtypes  # noqa: F401  (an onnx dependency; teaches numpy bfloat16)
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    try:
        raw = load_file(str(path))
    except (SafetensorError, OSError, ValueError, TypeError) as exc:
        raise ModelError(f"cannot load weights {path}: {exc}") from None
    prefix = next((p for p in HEAD_PREFIXES if p + EMBEDDING_NAMES["word"] in raw), None)
    if prefix is None:
        raise ModelError(f"{path} has no {EMBEDDING_NAMES['word']}: not a BERT encoder")
    weights: dict[str, np.ndarray] = {}
    for name, shape in _expected_shapes(config).items():
        tensor = raw.get(prefix + name)
        if tensor is None:
            raise ModelError(f"{path} lacks tensor {prefix + name}")
        if tuple(tensor.shape) != shape:
            raise ModelError(f"{path}: {prefix + name} has shape {tuple(tensor.shape)}, "
                             f"config.json implies {shape}")
        weights[name] = np.ascontiguousarray(tensor, dtype=np.float32)
    return weights


def _expected_shapes(config: BertConfig) -> dict[str, tuple[int, ...]]:
    hidden, inner = config.hidden_size, config.intermediate_size
    shapes: dict[str, tuple[int, ...]] = {
        EMBEDDING_NAMES["word"]: (config.vocab_size, hidden),
        EMBEDDING_NAMES["position"]: (config.max_positions, hidden),
        EMBEDDING_NAMES["ln.w"]: (hidden,),
        EMBEDDING_NAMES["ln.b"]: (hidden,),
    }
    if config.has_token_types:
        shapes[EMBEDDING_NAMES["token_type"]] = (config.type_vocab_size, hidden)
    if config.relative_buckets:
        shapes[RELATIVE_ATTENTION_BIAS] = (config.relative_buckets, config.num_heads)
    for layer in range(config.num_layers):
        names = _layer_names(layer, config)
        for key in ("q", "k", "v", "o"):
            shapes[names[f"{key}.w"]] = (hidden, hidden)
            shapes[names[f"{key}.b"]] = (hidden,)
        shapes[names["up.w"]] = (inner, hidden)
        shapes[names["up.b"]] = (inner,)
        shapes[names["down.w"]] = (hidden, inner)
        shapes[names["down.b"]] = (hidden,)
        for norm in ("ln1", "ln2"):
            shapes[names[f"{norm}.w"]] = (hidden,)
            shapes[names[f"{norm}.b"]] = (hidden,)
    return shapes


# --------------------------------------------------------------------------- numpy forward


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps) * weight + bias


_erf = np.vectorize(math.erf, otypes=[np.float64])


def _activation(x: np.ndarray, kind: str) -> np.ndarray:
    if kind == "relu":
        return np.maximum(x, 0.0)
    if kind == "tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def counted_position_ids(attention_mask: np.ndarray, padding_idx: int) -> np.ndarray:
    """RoBERTa's / MPNet's positions: real tokens count ``padding_idx + 1, + 2, ...``; padding
    gets ``padding_idx``. Hugging Face counts the tokens that are not the pad id, which is the
    same as counting the attention mask for anything a tokenizer pads."""
    mask = attention_mask.astype(np.int64)
    return np.cumsum(mask, axis=1) * mask + padding_idx


def relative_position_buckets(
    relative_position: np.ndarray, num_buckets: int, max_distance: int
) -> np.ndarray:
    """T5's bidirectional bucketing, as ``MPNetEncoder.relative_position_bucket`` computes it
    (float32 logarithm, truncated): ``relative_position`` is key position − query position.
    Half the buckets are for keys before the query; within each half, the first half are exact
    distances and the rest grow logarithmically up to ``max_distance``."""
    distance = -np.asarray(relative_position, dtype=np.int64)
    half = num_buckets // 2
    buckets = (distance < 0).astype(np.int64) * half
    distance = np.abs(distance)
    max_exact = half // 2
    ratio = np.maximum(distance, max_exact).astype(np.float32) / np.float32(max_exact)
    logarithmic = max_exact + (np.log(ratio) / np.float32(math.log(max_distance / max_exact))
                               * np.float32(half - max_exact)).astype(np.int64)
    logarithmic = np.minimum(logarithmic, half - 1)
    return buckets + np.where(distance < max_exact, distance, logarithmic)


def relative_bias_by_distance(config: BertConfig, table: np.ndarray) -> np.ndarray:
    """The bias row of every key − query offset ``-(n - 1) .. n - 1`` (n: the longest input),
    ``[2n - 1, heads]``: the graph looks the offsets up here instead of bucketing them."""
    longest = config.longest_input
    offsets = np.arange(-(longest - 1), longest)
    return table[relative_position_buckets(offsets, config.relative_buckets,
                                           config.relative_max_distance)]


def reference_forward(
    config: BertConfig,
    weights: dict[str, np.ndarray],
    input_ids: np.ndarray,
    attention_mask: np.ndarray,
    token_type_ids: np.ndarray | None = None,
) -> np.ndarray:
    """The encoder's ``last_hidden_state`` computed in numpy (float64), as BERT (RoBERTa,
    MPNet) defines it."""
    w = {name: value.astype(np.float64) for name, value in weights.items()}
    batch, seq = input_ids.shape
    if config.counts_positions:
        positions = counted_position_ids(attention_mask, config.padding_idx)
        hidden = w[EMBEDDING_NAMES["word"]][input_ids] + w[EMBEDDING_NAMES["position"]][positions]
    else:
        hidden = w[EMBEDDING_NAMES["word"]][input_ids] + w[EMBEDDING_NAMES["position"]][:seq]
    if config.has_token_types:
        types = np.zeros_like(input_ids) if token_type_ids is None else token_type_ids
        hidden = hidden + w[EMBEDDING_NAMES["token_type"]][types]
    hidden = _layer_norm(hidden, w[EMBEDDING_NAMES["ln.w"]], w[EMBEDDING_NAMES["ln.b"]],
                         config.layer_norm_eps)
    # [b, 1, 1, s]: 0 where attended, float32 min where padded; plus MPNet's [1, heads, s, s].
    attention_bias = (1.0 - attention_mask[:, None, None, :]) * np.finfo(np.float32).min
    if config.relative_buckets:
        offsets = np.arange(seq)[None, :] - np.arange(seq)[:, None]  # key − query
        buckets = relative_position_buckets(offsets, config.relative_buckets,
                                            config.relative_max_distance)
        attention_bias = attention_bias + w[RELATIVE_ATTENTION_BIAS][buckets].transpose(2, 0, 1)
    heads, size = config.num_heads, config.head_size

    def split(x: np.ndarray) -> np.ndarray:  # [b, s, h] -> [b, heads, s, size]
        return x.reshape(batch, seq, heads, size).transpose(0, 2, 1, 3)

    for layer in range(config.num_layers):
        n = {key: w[name] for key, name in _layer_names(layer, config).items()}
        q = split(hidden @ n["q.w"].T + n["q.b"])
        k = split(hidden @ n["k.w"].T + n["k.b"])
        v = split(hidden @ n["v.w"].T + n["v.b"])
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(size) + attention_bias
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        probs = scores / scores.sum(axis=-1, keepdims=True)
        context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq, heads * size)
        attended = _layer_norm(context @ n["o.w"].T + n["o.b"] + hidden,
                               n["ln1.w"], n["ln1.b"], config.layer_norm_eps)
        inner = _activation(attended @ n["up.w"].T + n["up.b"], config.activation)
        hidden = _layer_norm(inner @ n["down.w"].T + n["down.b"] + attended,
                             n["ln2.w"], n["ln2.b"], config.layer_norm_eps)
    return hidden.astype(np.float32)


# --------------------------------------------------------------------------- the ONNX graph


class _GraphBuilder:
    """Collects nodes and initializers; every helper returns the name of its output."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0

    def _name(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def constant(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, op_type: str, inputs: Sequence[str], hint: str = "", **attributes: Any) -> str:
        from onnx import helper

        output = self._name(hint or op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [output], **attributes))
        return output

    def linear(self, x: str, weight: np.ndarray, bias: np.ndarray, name: str) -> str:
        """``x @ weight.T + bias`` (weights stored transposed, as MatMul wants them)."""
        w = self.constant(f"{name}.weight_t", weight.T.astype(np.float32))
        b = self.constant(f"{name}.bias", bias.astype(np.float32))
        return self.op("Add", [self.op("MatMul", [x, w], name), b], name)

    def layer_norm(self, x: str, weight: np.ndarray, bias: np.ndarray, eps: float,
                   name: str) -> str:
        gamma = self.constant(f"{name}.weight", weight.astype(np.float32))
        beta = self.constant(f"{name}.bias", bias.astype(np.float32))
        return self.op("LayerNormalization", [x, gamma, beta], name, axis=-1, epsilon=eps)


def build_graph(config: BertConfig, weights: dict[str, np.ndarray], name: str = "bert") -> Any:
    """The ONNX ``ModelProto`` of the encoder (opset 17)."""
    from onnx import TensorProto, helper

    g = _GraphBuilder()
    const = g.constant
    one_d = np.int64
    seq_len = g.op("Shape", ["input_ids"], "seq_len", start=1, end=2)
    embedded = g.op("Add", [
        g.op("Gather", [const("word_embeddings", weights[EMBEDDING_NAMES["word"]]), "input_ids"],
             "word"),
        _position_nodes(g, config, weights[EMBEDDING_NAMES["position"]], seq_len),
    ], "word_position")
    if config.has_token_types:
        embedded = g.op("Add", [embedded, g.op("Gather", [
            const("token_type_embeddings", weights[EMBEDDING_NAMES["token_type"]]),
            "token_type_ids"], "token_type")], "embedded")
    hidden = g.layer_norm(embedded, weights[EMBEDDING_NAMES["ln.w"]],
                          weights[EMBEDDING_NAMES["ln.b"]], config.layer_norm_eps, "embeddings.ln")

    # [b, s] mask -> [b, 1, 1, s] additive bias: 0 where attended, float32 min where padded.
    mask = g.op("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    mask = g.op("Unsqueeze", [mask, const("mask_axes", np.array([1, 2], one_d))], "mask_4d")
    inverted = g.op("Sub", [const("one_f", np.array(1.0, np.float32)), mask], "mask_inverted")
    attention_bias = g.op("Mul", [inverted, const("mask_min", np.array(
        np.finfo(np.float32).min, np.float32))], "mask_bias")
    if config.relative_buckets:  # MPNet: one [heads, s, s] bias shared by every layer
        attention_bias = g.op("Add", [attention_bias, _relative_bias_nodes(
            g, config, weights[RELATIVE_ATTENTION_BIAS], seq_len)], "attention_bias")
    heads_shape = const("heads_shape", np.array([0, 0, config.num_heads, config.head_size], one_d))
    merged_shape = const("merged_shape", np.array([0, 0, config.hidden_size], one_d))
    scale = const("attention_scale", np.array(1.0 / math.sqrt(config.head_size), np.float32))
    activate = _activation_nodes(g, config.activation)

    for layer in range(config.num_layers):
        n = {key: weights[hf] for key, hf in _layer_names(layer, config).items()}
        p = f"layer{layer}"

        def heads(x: str, perm: list[int], tag: str, p: str = p) -> str:
            return g.op("Transpose", [g.op("Reshape", [x, heads_shape], f"{p}.{tag}_split")],
                        f"{p}.{tag}_heads", perm=perm)

        q = heads(g.linear(hidden, n["q.w"], n["q.b"], f"{p}.query"), [0, 2, 1, 3], "q")
        k = heads(g.linear(hidden, n["k.w"], n["k.b"], f"{p}.key"), [0, 2, 3, 1], "k")
        v = heads(g.linear(hidden, n["v.w"], n["v.b"], f"{p}.value"), [0, 2, 1, 3], "v")
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k], f"{p}.qk"), scale],
                                   f"{p}.scaled"), attention_bias], f"{p}.scores")
        probs = g.op("Softmax", [scores], f"{p}.probs", axis=-1)
        context = g.op("Reshape", [
            g.op("Transpose", [g.op("MatMul", [probs, v], f"{p}.context")], f"{p}.context_t",
                 perm=[0, 2, 1, 3]),
            merged_shape], f"{p}.context_merged")
        attention = g.linear(context, n["o.w"], n["o.b"], f"{p}.attention_out")
        attended = g.layer_norm(g.op("Add", [attention, hidden], f"{p}.residual1"),
                                n["ln1.w"], n["ln1.b"], config.layer_norm_eps, f"{p}.ln1")
        inner = activate(g.linear(attended, n["up.w"], n["up.b"], f"{p}.intermediate"), p)
        out = g.linear(inner, n["down.w"], n["down.b"], f"{p}.output")
        hidden = g.layer_norm(g.op("Add", [out, attended], f"{p}.residual2"),
                              n["ln2.w"], n["ln2.b"], config.layer_norm_eps, f"{p}.ln2")

    g.nodes.append(helper.make_node("Identity", [hidden], ["last_hidden_state"]))
    inputs = [helper.make_tensor_value_info(input_name, TensorProto.INT64, ["batch", "seq"])
              for input_name in graph_input_names(config)]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                           ["batch", "seq", config.hidden_size])
    graph = helper.make_graph(g.nodes, name, inputs, [output], initializer=g.initializers)
    model = helper.make_model(graph, producer_name="ramem-local",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    return model


def graph_input_names(config: BertConfig) -> tuple[str, ...]:
    """What the graph takes: MPNet has no token types."""
    if config.has_token_types:
        return ("input_ids", "attention_mask", "token_type_ids")
    return ("input_ids", "attention_mask")


def _position_nodes(g: _GraphBuilder, config: BertConfig, table: np.ndarray, seq_len: str) -> str:
    """The position embeddings: ``[s, hidden]`` rows 0 .. seq - 1 (BERT), or ``[b, s, hidden]``
    rows gathered at :func:`counted_position_ids` (RoBERTa, MPNet)."""
    positions = g.constant("position_embeddings", table)
    if not config.counts_positions:
        return g.op("Slice", [
            positions, g.constant("slice_start", np.array([0], np.int64)), seq_len,
            g.constant("slice_axis", np.array([0], np.int64)),
        ], "position")
    counted = g.op("CumSum", ["attention_mask", g.constant("cumsum_axis", np.array(1, np.int64))],
                   "mask_cumsum")
    ids = g.op("Add", [
        g.op("Mul", [counted, "attention_mask"], "counted_positions"),
        g.constant("padding_idx", np.array(config.padding_idx, np.int64)),
    ], "position_ids")
    return g.op("Gather", [positions, ids], "position")


def _relative_bias_nodes(g: _GraphBuilder, config: BertConfig, table: np.ndarray,
                         seq_len: str) -> str:
    """MPNet's relative attention bias ``[heads, s, s]``: every key − query offset looked up in
    :func:`relative_bias_by_distance` (bucketed here in numpy, not in the graph)."""
    longest = config.longest_input
    by_distance = g.constant("relative_bias_by_distance",
                             relative_bias_by_distance(config, table).astype(np.float32))
    seq = g.op("Squeeze", [seq_len, g.constant("seq_axis", np.array([0], np.int64))], "seq")
    steps = g.op("Range", [g.constant("range_start", np.array(0, np.int64)), seq,
                           g.constant("range_step", np.array(1, np.int64))], "steps")
    keys = g.op("Unsqueeze", [steps, g.constant("key_axis", np.array([0], np.int64))], "keys")
    queries = g.op("Unsqueeze", [steps, g.constant("query_axis", np.array([1], np.int64))],
                   "queries")
    offsets = g.op("Add", [
        g.op("Sub", [keys, queries], "relative_position"),
        g.constant("offset_origin", np.array(longest - 1, np.int64)),
    ], "offset_rows")
    bias = g.op("Gather", [by_distance, offsets], "relative_bias_rows")  # [s, s, heads]
    return g.op("Transpose", [bias], "relative_bias", perm=[2, 0, 1])


def _activation_nodes(g: _GraphBuilder, kind: str) -> Callable[[str, str], str]:
    """The feed-forward activation as graph nodes (exact erf GELU, tanh GELU or ReLU)."""
    if kind == "relu":
        return lambda x, p: g.op("Relu", [x], f"{p}.relu")
    half = g.constant("gelu_half", np.array(0.5, np.float32))
    one = g.constant("gelu_one", np.array(1.0, np.float32))
    if kind == "erf":
        root2 = g.constant("gelu_sqrt2", np.array(math.sqrt(2.0), np.float32))

        def gelu_erf(x: str, p: str) -> str:
            erf = g.op("Erf", [g.op("Div", [x, root2], f"{p}.gelu_scaled")], f"{p}.gelu_erf")
            return g.op("Mul", [g.op("Mul", [x, half], f"{p}.gelu_half"),
                                g.op("Add", [erf, one], f"{p}.gelu_sum")], f"{p}.gelu")

        return gelu_erf
    cubic = g.constant("gelu_cubic", np.array(0.044715, np.float32))
    scale = g.constant("gelu_tanh_scale", np.array(math.sqrt(2.0 / math.pi), np.float32))
    three = g.constant("gelu_three", np.array(3.0, np.float32))

    def gelu_tanh(x: str, p: str) -> str:
        inner = g.op("Add", [x, g.op("Mul", [g.op("Pow", [x, three], f"{p}.gelu_cube"), cubic],
                                     f"{p}.gelu_cubic")], f"{p}.gelu_inner")
        tanh = g.op("Tanh", [g.op("Mul", [inner, scale], f"{p}.gelu_scaled")], f"{p}.gelu_tanh")
        return g.op("Mul", [g.op("Mul", [x, half], f"{p}.gelu_half"),
                            g.op("Add", [tanh, one], f"{p}.gelu_sum")], f"{p}.gelu")

    return gelu_tanh


# --------------------------------------------------------------------------- folder conversion


@dataclass(frozen=True)
class ConversionReport:
    """What :func:`convert_folder` wrote and how closely the graph matched numpy."""

    target: Path
    config: BertConfig
    max_hidden_difference: float
    min_cosine: float
    weights_sha256: str


def is_convertible_folder(folder: Path) -> bool:
    """A Hugging Face folder with safetensors weights and no ONNX graph."""
    return (folder / CONFIG_FILE).is_file() and (folder / WEIGHTS_FILE).is_file()


def check_source_folder(folder: Path) -> None:
    """Refuse a folder the converter cannot use, naming what is missing."""
    if not folder.is_dir():
        raise ModelError(f"{folder} is not a folder")
    if not (folder / WEIGHTS_FILE).is_file():
        found = [p.name for p in folder.glob("*.bin")] + [p.name for p in folder.glob("*.pt")]
        hint = (f" (found {', '.join(found)}: PyTorch pickles need torch; save the model as "
                "safetensors first)") if found else ""
        raise ModelError(f"{folder} has no {WEIGHTS_FILE}{hint}")
    for required in (CONFIG_FILE, TOKENIZER_FILE):
        if not (folder / required).is_file():
            raise ModelError(f"{folder} has no {required}")


def check_tokenizer(path: Path, config: BertConfig) -> None:
    """The tokenizer must only produce ids the embedding table has."""
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises its own exception type
        raise ModelError(f"cannot load tokenizer {path}: {exc}") from None
    size = tokenizer.get_vocab_size(with_added_tokens=True)
    if size > config.vocab_size:
        raise ModelError(f"{path} has {size} tokens but the model's embedding table has "
                         f"{config.vocab_size}: tokenizer and weights do not belong together")


def convert_folder(
    source: Path,
    target: Path,
    *,
    check: Callable[[Path], float] | None = None,
) -> ConversionReport:
    """Convert ``source`` into ``target`` (model.onnx, tokenizer.json and the pooling files).

    The graph is checked against :func:`reference_forward` on a few sentences before anything
    is written; ``check`` (e.g. pinned reference vectors) runs on the written folder and raises
    to refuse it. ``target`` is written through a temporary sibling and only replaces an older
    folder once everything passed.
    """
    import onnx

    from .registry import sha256_file

    source, target = Path(source), Path(target)
    check_source_folder(source)
    config = BertConfig.from_file(source / CONFIG_FILE)
    check_tokenizer(source / TOKENIZER_FILE, config)
    weights = load_weights(source / WEIGHTS_FILE, config)
    model = build_graph(config, weights, name=target.name or "bert")  # same bytes every time
    onnx.checker.check_model(model)

    staging = target.with_name(f".{target.name}.converting")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        # Protobuf cannot hold more than 2 GB: larger encoders keep their weights beside it.
        large = sum(w.nbytes for w in weights.values()) > EXTERNAL_DATA_BYTES
        onnx.save_model(model, str(staging / "model.onnx"), save_as_external_data=large,
                        location="model.onnx_data")
        del model
        for rel in (CONFIG_FILE, TOKENIZER_FILE, *SENTENCE_TRANSFORMERS_FILES):
            if (source / rel).is_file():
                (staging / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source / rel, staging / rel)
        difference, cosine = verify_against_numpy(staging, config, weights)
        if check is not None:
            cosine = min(cosine, check(staging))
        shutil.rmtree(target, ignore_errors=True)
        staging.replace(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return ConversionReport(target=target, config=config, max_hidden_difference=difference,
                            min_cosine=cosine, weights_sha256=sha256_file(source / WEIGHTS_FILE))


def verify_against_numpy(
    folder: Path, config: BertConfig, weights: dict[str, np.ndarray]
) -> tuple[float, float]:
    """Run the written graph on :data:`VERIFY_SENTENCES` and compare with the numpy pass:
    ``(largest |hidden difference|, smallest cosine of mean-pooled vectors)``; refuse a
    graph outside :data:`MAX_HIDDEN_DIFFERENCE` / :data:`MIN_COSINE`."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
    tokenizer.enable_truncation(max_length=min(config.longest_input, 128))
    tokenizer.enable_padding()
    encodings = tokenizer.encode_batch(list(VERIFY_SENTENCES))
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    types = np.array([e.type_ids for e in encodings], dtype=np.int64)
    session = ort.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
    (graph_hidden,) = session.run(["last_hidden_state"], {
        name: feeds[name] for name in graph_input_names(config)})
    numpy_hidden = reference_forward(config, weights, ids, mask, types)
    attended = mask[:, :, None].astype(bool)
    difference = float(np.abs(np.where(attended, graph_hidden - numpy_hidden, 0.0)).max())
    cosine = float(_cosines(_mean_pool(graph_hidden, mask), _mean_pool(numpy_hidden, mask)).min())
    if not difference <= MAX_HIDDEN_DIFFERENCE or not cosine >= MIN_COSINE:
        raise ModelError(
            f"the converted graph does not reproduce the model (largest difference "
            f"{difference:.2e}, lowest cosine {cosine:.6f}); nothing was installed"
        )
    return difference, cosine


def _mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    weights = mask[:, :, None].astype(np.float64)
    return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return (a * b).sum(axis=1)
