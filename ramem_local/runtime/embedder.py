"""One generic ONNX sentence embedder (CPU, onnxruntime + tokenizers).

Everything model-specific (pooling, prefixes, max length, dimension) comes from an
:class:`EmbedderSpec`, built from a registry entry or from the files that ship with the model
(sentence-transformers ``pooling_config.json``, HF ``config.json``). The same code runs a BERT-style
encoder (mean pooling, ``token_type_ids``) and a decoder export such as Qwen3-Embedding (last-token
pooling, ``position_ids`` and empty ``past_key_values.*`` inputs): the session's declared inputs
decide what is fed, never the model's name.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import EmbedderError
from ..types import EmbedderFingerprint
from .jsonfile import read_json
from .registry import file_sha256

POOLING_MODES = ("mean", "cls", "last_token")
DEFAULT_MAX_LENGTH = 512
FEW_TEXTS = 4  # at most this many texts are tokenised one by one (_embed)
_PAD_TOKEN_CANDIDATES = ("[PAD]", "<pad>", "<|endoftext|>", "</s>", "<|pad|>")
_ONNX_DTYPES: dict[str, Any] = {
    "tensor(int64)": np.int64,
    "tensor(int32)": np.int32,
    "tensor(float)": np.float32,
    "tensor(float16)": np.float16,
    "tensor(double)": np.float64,
    "tensor(bool)": np.bool_,
}


@dataclass(frozen=True)
class EmbedderSpec:
    """What drives an :class:`OnnxEmbedder`.

    ``dimension`` is the model's native output width (``None``: probe it once at load time);
    ``truncate_dim`` optionally keeps only the first N components (Matryoshka) before normalising.
    """

    name: str
    model_path: Path
    tokenizer_path: Path
    dimension: int | None
    max_length: int
    pooling: str
    normalize: bool = True
    query_prefix: str = ""
    document_prefix: str = ""
    truncate_dim: int | None = None
    folder: Path | None = None  # the model folder it was read from (resolved)


# --------------------------------------------------------------------------- spec from a folder


def _read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object from ``path``, or None when the file is absent; unreadable -> EmbedderError."""
    if not path.is_file():
        return None
    data = read_json(path, error=EmbedderError)
    return data if isinstance(data, dict) else None


def _find_model_file(folder: Path, entry: dict[str, Any]) -> Path:
    """The registry's ``source.file`` when present, else model.onnx or onnx/model.onnx."""
    declared = (entry.get("source") or {}).get("file")
    candidates = [folder / declared] if declared else []
    candidates += [folder / "model.onnx", folder / "onnx" / "model.onnx"]
    for path in candidates:
        if path.is_file():
            return path
    raise EmbedderError(f"embedder folder {folder} has no model.onnx (nor onnx/model.onnx)")


def _find_tokenizer_file(folder: Path, model_path: Path, entry: dict[str, Any]) -> Path:
    declared = (entry.get("source") or {}).get("tokenizer")
    candidates = [folder / declared] if declared else []
    candidates += [folder / "tokenizer.json", model_path.parent / "tokenizer.json"]
    for path in candidates:
        if path.is_file():
            return path
    raise EmbedderError(f"embedder folder {folder} has no tokenizer.json")


def _pooling_from_config(folder: Path) -> str:
    """Pooling from a sentence-transformers pooling config, else "mean" (the ST default)."""
    for path in (folder / "pooling_config.json", folder / "1_Pooling" / "config.json"):
        config = _read_json(path)
        if config is None:
            continue
        if config.get("pooling_mode_lasttoken"):
            return "last_token"
        if config.get("pooling_mode_cls_token"):
            return "cls"
        if config.get("pooling_mode_mean_tokens"):
            return "mean"
        enabled = sorted(k for k, v in config.items() if k.startswith("pooling_mode") and v)
        if enabled:
            raise EmbedderError(f"{path}: unsupported pooling {', '.join(enabled)}")
    return "mean"


def _normalize_from_config(folder: Path) -> bool:
    """Whether the folder's sentence-transformers pipeline ends in a Normalize module; True when
    there is no ``modules.json`` (vectors are compared by cosine, so unit length is harmless)."""
    path = folder / "modules.json"
    if not path.is_file():
        return True
    modules = read_json(path, error=EmbedderError)
    if not isinstance(modules, list):
        raise EmbedderError(f"{path} does not hold a list of modules")
    return any(isinstance(m, dict) and str(m.get("type", "")).endswith(".Normalize")
               for m in modules)


def _max_length_from_config(folder: Path, model_path: Path) -> int:
    """ST's max_seq_length when present (the trained length), else position embeddings <= 512."""
    st_config = _read_json(folder / "sentence_bert_config.json")
    if st_config and isinstance(st_config.get("max_seq_length"), int):
        return int(st_config["max_seq_length"])
    config = _model_config(model_path)
    positions = config.get("max_position_embeddings")
    if isinstance(positions, int) and positions > 0:
        return min(positions, DEFAULT_MAX_LENGTH)
    return DEFAULT_MAX_LENGTH


def _model_config(model_path: Path) -> dict[str, Any]:
    """HF config.json beside the model file or one level up (for onnx/model.onnx layouts)."""
    for folder in (model_path.parent, model_path.parent.parent):
        config = _read_json(folder / "config.json")
        if config is not None:
            return config
    return {}


def spec_from_folder(
    folder: Path, name: str | None = None, registry_entry: dict[str, Any] | None = None
) -> EmbedderSpec:
    """Build a spec from a model folder; registry fields win over what the folder's files say."""
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise EmbedderError(f"embedder folder {folder} does not exist")
    entry = registry_entry or {}
    model_path = _find_model_file(folder, entry)
    tokenizer_path = _find_tokenizer_file(folder, model_path, entry)
    pooling = entry.get("pooling") or _pooling_from_config(folder)
    _check_pooling(pooling)
    max_length = entry.get("max_length") or _max_length_from_config(folder, model_path)
    truncate_dim = entry.get("truncate_dim")
    allowed = entry.get("matryoshka_dims")
    if truncate_dim is not None and allowed and truncate_dim not in allowed:
        raise EmbedderError(f"truncate_dim {truncate_dim} is not a trained size {allowed}")
    return EmbedderSpec(
        name=name or folder.name,
        model_path=model_path,
        tokenizer_path=tokenizer_path,
        dimension=entry.get("dimension"),
        max_length=int(max_length),
        pooling=pooling,
        normalize=bool(entry["normalize"]) if "normalize" in entry
        else _normalize_from_config(folder),
        query_prefix=entry.get("query_prefix") or "",
        document_prefix=entry.get("document_prefix") or "",
        truncate_dim=truncate_dim,
        folder=folder.resolve(),
    )


# --------------------------------------------------------------------------- pure array functions


def _check_pooling(mode: str) -> None:
    if mode not in POOLING_MODES:
        expected = ", ".join(POOLING_MODES)
        raise EmbedderError(f"unknown pooling {mode!r} (expected one of {expected})")


def pool(hidden: np.ndarray, mask: np.ndarray, mode: str) -> np.ndarray:
    """Pool token states ``[batch, seq, hidden]`` into ``[batch, hidden]`` float32.

    ``last_token`` takes each row's last position whose mask is 1, so it is right for right
    padding (mask ends with zeros) and left padding (mask starts with zeros) alike.
    """
    _check_pooling(mode)
    hidden = np.asarray(hidden, dtype=np.float32)
    mask = np.asarray(mask)
    if mode == "mean":
        weights = (mask > 0).astype(np.float32)
        counts = np.maximum(weights.sum(axis=1, keepdims=True), 1.0)
        return np.einsum("bsh,bs->bh", hidden, weights) / counts
    if mode == "cls":
        return hidden[:, 0, :].copy()
    last = mask.shape[1] - 1 - np.argmax(mask[:, ::-1] > 0, axis=1)
    return hidden[np.arange(hidden.shape[0]), last, :]


def postprocess(vectors: np.ndarray, truncate_dim: int | None, normalize: bool) -> np.ndarray:
    """Matryoshka truncation first (the prefix is what was trained), then L2 normalisation."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if truncate_dim is not None:
        vectors = vectors[:, :truncate_dim]
    if normalize:
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors = vectors / np.maximum(norms, 1e-12)
    return np.ascontiguousarray(vectors, dtype=np.float32)


def position_ids(mask: np.ndarray) -> np.ndarray:
    """Positions of real tokens counted from 0; padding repeats a neighbour (clipped at 0)."""
    return np.clip(np.cumsum(mask, axis=1) - 1, 0, None).astype(np.int64)


@dataclass(frozen=True)
class InputMeta:
    """The parts of an onnxruntime ``NodeArg`` the feed builder needs (easy to fake in tests)."""

    name: str
    type: str
    shape: tuple[int | str | None, ...]


def _dtype(meta: InputMeta) -> Any:
    try:
        return _ONNX_DTYPES[meta.type]
    except KeyError:
        raise EmbedderError(f"graph input {meta.name} has unsupported type {meta.type}") from None


def _past_dim(dim: int | str | None, index: int, meta: InputMeta, batch: int,
              hints: dict[str, int]) -> int:
    """One dimension of an empty past tensor: batch, 0 for the past length, fixed ints as is."""
    if isinstance(dim, int) and dim >= 0:
        return dim
    label = dim.lower() if isinstance(dim, str) else ""
    if index == 0 or "batch" in label:
        return batch
    if "past" in label or "seq" in label or "len" in label:
        return 0
    if "head" in label and ("dim" in label or "size" in label) and "head_dim" in hints:
        return hints["head_dim"]
    if "head" in label and "num_heads" in hints:
        return hints["num_heads"]
    raise EmbedderError(f"graph input {meta.name}: cannot size symbolic dimension {dim!r}")


def empty_past(meta: InputMeta, batch: int, hints: dict[str, int] | None = None) -> np.ndarray:
    """An empty KV-cache tensor: a full forward pass with nothing cached."""
    shape = [_past_dim(d, i, meta, batch, hints or {}) for i, d in enumerate(meta.shape)]
    if 0 not in shape:
        raise EmbedderError(f"graph input {meta.name}: no past-sequence dimension in {meta.shape}")
    return np.zeros(shape, dtype=_dtype(meta))


def build_feeds(
    inputs: Sequence[InputMeta],
    ids: np.ndarray,
    mask: np.ndarray,
    hints: dict[str, int] | None = None,
) -> dict[str, np.ndarray]:
    """Feed exactly what the graph declares; unknown inputs fail loudly rather than guessed."""
    feeds: dict[str, np.ndarray] = {}
    unknown = []
    for meta in inputs:
        if meta.name == "input_ids":
            value = ids
        elif meta.name == "attention_mask":
            value = mask
        elif meta.name == "token_type_ids":
            value = np.zeros_like(ids)
        elif meta.name == "position_ids":
            value = position_ids(mask)
        elif meta.name.startswith("past_key_values"):
            feeds[meta.name] = empty_past(meta, ids.shape[0], hints)
            continue
        else:
            unknown.append(meta.name)
            continue
        feeds[meta.name] = value.astype(_dtype(meta), copy=False)
    if unknown:
        raise EmbedderError(f"graph needs inputs the embedder cannot supply: {', '.join(unknown)}")
    return feeds


def _kv_hints(config: dict[str, Any]) -> dict[str, int]:
    """Head count / head size from config.json, for exports that leave them symbolic."""
    hints: dict[str, int] = {}
    heads = config.get("num_key_value_heads") or config.get("num_attention_heads")
    if isinstance(heads, int):
        hints["num_heads"] = heads
    head_dim = config.get("head_dim")
    hidden, attn_heads = config.get("hidden_size"), config.get("num_attention_heads")
    if not isinstance(head_dim, int) and isinstance(hidden, int) and isinstance(attn_heads, int):
        head_dim = hidden // attn_heads if attn_heads else None
    if isinstance(head_dim, int):
        hints["head_dim"] = head_dim
    return hints


# --------------------------------------------------------------------------- the embedder


def _pick_output(outputs: Sequence[Any]) -> tuple[str, bool]:
    """(output name, already pooled?): last_hidden_state if 3-D, else any 3-D, else any 2-D."""
    ranked = [o for o in outputs if o.shape is not None]
    for out in ranked:
        if out.name == "last_hidden_state" and len(out.shape) == 3:
            return out.name, False
    for out in ranked:
        if len(out.shape) == 3:
            return out.name, False
    for out in ranked:
        if len(out.shape) == 2:
            return out.name, True
    names = ", ".join(f"{o.name}{o.shape}" for o in outputs)
    raise EmbedderError(f"graph has no [batch, seq, hidden] or [batch, hidden] output: {names}")


class OnnxEmbedder:
    """Embed texts with an ONNX model on CPU; float32 vectors, optionally unit-normalised."""

    def __init__(self, spec: EmbedderSpec, threads: int | None = None, batch_size: int = 16):
        """``batch_size``: texts per graph run. Cost per real token is about the same from 8 to
        64 texts (MiniLM, measured), so smaller batches of sorted texts win by padding less."""
        _check_pooling(spec.pooling)
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        if spec.truncate_dim is not None and spec.truncate_dim < 1:
            raise EmbedderError(f"truncate_dim must be positive, got {spec.truncate_dim}")
        self.spec = spec
        self.name = spec.name
        self.batch_size = batch_size
        self._hints = _kv_hints(_model_config(spec.model_path))
        self._session = self._open_session(spec.model_path, threads, self._hints)
        self._tokenizer, self._pad_id = self._open_tokenizer(spec.tokenizer_path, spec.max_length)
        self._inputs = _input_metas(self._session)
        self._output, self._pooled_output = _pick_output(self._session.get_outputs())
        build_feeds(self._inputs, np.zeros((1, 1), np.int64), np.ones((1, 1), np.int64),
                    self._hints)  # fail at load time, not at the first embed, on odd graphs
        self._native_dim = spec.dimension
        self.dimension = self._resolve_dimension()

    @property
    def fingerprint(self) -> EmbedderFingerprint:
        """What a bank records to refuse mixing vectors of two different embedders."""
        return EmbedderFingerprint(self.spec.name, self.dimension,
                                   file_sha256(self.spec.model_path))

    # ---- loading

    @staticmethod
    def _open_session(model_path: Path, threads: int | None, hints: dict[str, int]) -> Any:
        """The session, from the graph onnxruntime optimised and saved at an earlier open when
        there is one (:mod:`.optimized_graph`: created in 0.43x the time, MiniLM)."""
        from .optimized_graph import open_session

        try:
            return open_session(model_path, threads or os.cpu_count() or 1,
                                probe=lambda session: _probe_output(session, hints))
        except Exception as exc:  # onnxruntime raises several private exception types
            message = f"cannot load ONNX model {model_path}: {_first_line(exc)}"
            raise EmbedderError(message) from None

    @staticmethod
    def _open_tokenizer(path: Path, max_length: int) -> tuple[Any, int]:
        """Load tokenizer.json, replacing whatever truncation/padding it ships (often fixed 128);
        also the pad id (the shipped padding's, read before it is turned off)."""
        from tokenizers import Tokenizer

        try:
            tokenizer = Tokenizer.from_file(str(path))
        except Exception as exc:
            raise EmbedderError(f"cannot load tokenizer {path}: {_first_line(exc)}") from None
        pad_id = _pad_id(tokenizer)
        tokenizer.enable_truncation(max_length=max_length)
        tokenizer.no_padding()  # each batch is padded to its own longest text (pad_batch)
        return tokenizer, pad_id

    def _resolve_dimension(self) -> int:
        if self._native_dim is None:
            probe = self._tokenizer.encode_batch(["dimension probe"])
            self._native_dim = int(self._encode_batch(probe).shape[1])
        if self.spec.truncate_dim is not None:
            if self.spec.truncate_dim > self._native_dim:
                raise EmbedderError(
                    f"truncate_dim {self.spec.truncate_dim} exceeds the model's "
                    f"dimension {self._native_dim}"
                )
            return self.spec.truncate_dim
        return self._native_dim

    # ---- embedding

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """float32 ``[n, dimension]``, input order kept; the document prefix is prepended."""
        return self._embed([self.spec.document_prefix + t for t in _check_texts(texts)])

    def embed_query(self, text: str) -> np.ndarray:
        """float32 ``[dimension]``; the query prefix (e.g. a retrieval instruction) is prepended."""
        if not isinstance(text, str):
            raise TypeError(f"embed_query expects a str, got {type(text).__name__}")
        return self._embed([self.spec.query_prefix + text])[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """float32 ``[n, dimension]``: ``embed_query`` of each, in one batch."""
        return self._embed([self.spec.query_prefix + t for t in _check_texts(texts)])

    def _embed(self, texts: list[str]) -> np.ndarray:
        """Tokenise once, run batches of texts of similar token count (little padding to
        compute), put the results back in input order.

        Sorting by tokens rather than characters matters: LoCoMo's 2,760 turns in one call,
        batches of 16, pad to 1.01x their tokens instead of 1.15x.
        """
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        # A query or two: one at a time (the batch call wakes the tokenizer's thread pool,
        # which then competes with the graph's threads: 1.7 ms a search instead of 0.1).
        encodings = ([self._tokenizer.encode(text) for text in texts]
                     if len(texts) <= FEW_TEXTS else self._tokenizer.encode_batch(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), self.batch_size):
            chunk = order[start:start + self.batch_size]
            pooled = self._encode_batch([encodings[i] for i in chunk])
            out[chunk] = postprocess(pooled, self.spec.truncate_dim, self.spec.normalize)
        return out

    def feeds(self, texts: Sequence[str]) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """The graph inputs for ``texts`` as one padded batch (no prefix), and its mask: for
        running the same graph with other outputs (the int8 installer reads activations)."""
        ids, mask = pad_batch([e.ids for e in self._tokenizer.encode_batch(list(texts))],
                              self._pad_id)
        return build_feeds(self._inputs, ids, mask, self._hints), mask

    def _encode_batch(self, encodings: list[Any]) -> np.ndarray:
        """Pad to the batch's longest, run the graph, pool: ``[batch, native]``."""
        ids, mask = pad_batch([e.ids for e in encodings], self._pad_id)
        feeds = build_feeds(self._inputs, ids, mask, self._hints)
        (hidden,) = self._session.run([self._output], feeds)
        pooled = np.asarray(hidden, dtype=np.float32)
        if not self._pooled_output:
            pooled = pool(pooled, mask, self.spec.pooling)
        if self._native_dim is not None and pooled.shape[1] != self._native_dim:
            raise EmbedderError(
                f"{self.spec.name}: model outputs {pooled.shape[1]}-d vectors, "
                f"spec says {self._native_dim}"
            )
        return pooled


def _input_metas(session: Any) -> list[InputMeta]:
    return [InputMeta(i.name, i.type, tuple(i.shape or ())) for i in session.get_inputs()]


def _probe_output(session: Any, hints: dict[str, int]) -> np.ndarray:
    """The graph's raw output for a fixed input of 8 token ids (1..8, in every vocabulary): what
    :mod:`.optimized_graph` compares between a saved graph and the model file."""
    ids = np.arange(1, 9, dtype=np.int64)[None, :]
    feeds = build_feeds(_input_metas(session), ids, np.ones_like(ids), hints)
    output, _ = _pick_output(session.get_outputs())
    return np.asarray(session.run([output], feeds)[0])


def pad_batch(token_ids: Sequence[Sequence[int]], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, attention_mask)`` int64 ``[batch, longest]``, padded on the right."""
    width = max((len(row) for row in token_ids), default=0)
    ids = np.full((len(token_ids), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(token_ids), width), dtype=np.int64)
    for row, tokens in enumerate(token_ids):
        ids[row, :len(tokens)] = tokens
        mask[row, :len(tokens)] = 1
    return ids, mask


def _first_line(exc: BaseException) -> str:
    """EmbedderError promises one line; onnxruntime messages often span several."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _check_texts(texts: Sequence[str]) -> list[str]:
    """Reject a bare str (a Sequence[str] too, it would embed one vector per character)."""
    if isinstance(texts, str):
        raise TypeError("embed_documents expects a sequence of str, not a single str")
    texts = list(texts)
    for text in texts:
        if not isinstance(text, str):
            raise TypeError(f"embed_documents expects str items, got {type(text).__name__}")
    return texts


def _pad_id(tokenizer: Any) -> int:
    """The tokenizer's declared pad token, else a conventional one in its vocabulary, else id 0."""
    shipped = tokenizer.padding
    if shipped and shipped.get("pad_token") is not None:
        return int(shipped.get("pad_id", 0))
    for token in _PAD_TOKEN_CANDIDATES:
        token_id = tokenizer.token_to_id(token)
        if token_id is not None:
            return int(token_id)
    return 0

