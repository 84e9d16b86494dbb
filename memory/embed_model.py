"""A BERT sentence encoder (all-MiniLM-L6-v2) run in NumPy, from a model folder's own files.

No torch: the weights are read from model.safetensors by a memory map, the words cut by the
folder's tokenizer.json (Hugging Face tokenizers, a Rust wheel), and the forward pass written
out here: embeddings, layers of self-attention and feed-forward, mean pooling over the words,
unit length. Everything comes from the folder, so nothing is downloaded, ever.

The file's float32 weights (87 MiB, every page of them resident once used) are kept as
int8 with one float32 scale per row, a quarter of the size, and widened back to float32 where
they are used: all the arithmetic stays float32 (docs/performance.md, figure 6).
"""

import json
import struct
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from tokenizers import Tokenizer

Array = NDArray[np.float32]
# Matrices with at least this many values are kept as int8 rows (smaller ones as float32).
COMPACT_FROM = 65_536
_SLICE_ROWS = 1024
_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
# Words past this many tokens are left out (the model was trained on 256 and below).
MAX_TOKENS = 256


def read_safetensors(path: Path) -> dict[str, NDArray[np.generic]]:
    """Map a safetensors file's tensors without copying them (the format is a JSON header)."""
    with path.open("rb") as file:
        size = struct.unpack("<Q", file.read(8))[0]
        header = json.loads(file.read(size))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    tensors = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        start, end = spec["data_offsets"]
        dtype = _DTYPES[spec["dtype"]]
        tensors[name] = data[start:end].view(dtype).reshape(spec["shape"])
    return tensors


class Rows:
    """A matrix kept as int8 with a float32 scale per row: each row is scale * its int8s."""

    def __init__(self, matrix: NDArray[np.generic]):
        self.values = np.empty(matrix.shape, dtype=np.int8)
        self.scale: Array = np.empty(len(matrix), dtype=np.float32)
        # A slice at a time: whole-matrix temporaries (47 MiB for the words' table) would be
        # freed to the allocator but stay in the process's resident memory.
        for start in range(0, len(matrix), _SLICE_ROWS):
            part = np.asarray(matrix[start : start + _SLICE_ROWS], dtype=np.float32)
            peak = np.abs(part).max(axis=1)
            scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
            self.scale[start : start + len(part)] = scale
            self.values[start : start + len(part)] = np.rint(part / scale[:, None])

    def rows(self, index: NDArray[np.int64]) -> Array:
        """Return the rows at index (any shape) as float32."""
        out: Array = self.values[index].astype(np.float32) * self.scale[index][..., None]
        return out

    def apply(self, x: Array) -> Array:
        """Return x @ matrix.T, the matrix stored as PyTorch stores a linear layer (out, in)."""
        out: Array = (x @ self.values.T.astype(np.float32)) * self.scale
        return out


def compact(tensors: dict[str, NDArray[np.generic]]) -> dict[str, "Rows | Array"]:
    """Return the weights as kept: large matrices as int8 Rows, the rest as float32 copies."""
    return {
        name: Rows(value)
        if value.ndim == 2 and value.size >= COMPACT_FROM
        else np.array(value, dtype=np.float32)
        for name, value in tensors.items()
    }


def _layer_norm(x: Array, weight: Array, bias: Array, eps: float) -> Array:
    """Normalise each vector, then scale and shift it."""
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    normal: Array = ((x - mean) / np.sqrt(variance + eps)) * weight + bias
    return normal


_A5 = 1.061405429


def _gelu(x: Array) -> Array:
    """BERT's exact GELU, with erf by Abramowitz and Stegun 7.1.26 (error under 1.5e-7)."""
    z = np.abs(x) / np.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    erf = np.sign(x) * (1.0 - poly * np.exp(-z * z))
    out: Array = (0.5 * x * (1.0 + erf)).astype(np.float32)
    return out


def _softmax(x: Array) -> Array:
    """Softmax over the last axis."""
    e = np.exp(x - x.max(-1, keepdims=True))
    out: Array = e / e.sum(-1, keepdims=True)
    return out


class SentenceEncoder:
    """Turns texts into unit vectors with a BERT model folder (config, weights, tokenizer)."""

    def __init__(self, folder: Path):
        config = json.loads((folder / "config.json").read_text())
        self._heads = int(config["num_attention_heads"])
        self._layers = int(config["num_hidden_layers"])
        self._eps = float(config.get("layer_norm_eps", 1e-12))
        # Copied out of the map, which is then closed: only the compact copy stays resident.
        self._w = compact(read_safetensors(folder / "model.safetensors"))
        self.dimensions = int(config["hidden_size"])
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding()

    def _p(self, name: str) -> Array:
        """Return one weight as float32."""
        weight = self._w[name]
        return weight.rows(np.arange(len(weight.values))) if isinstance(weight, Rows) else weight

    def _rows(self, name: str, index: NDArray[np.int64]) -> Array:
        """Return some rows of one weight (an embedding table) as float32."""
        weight = self._w[name]
        return weight.rows(index) if isinstance(weight, Rows) else weight[index]

    def _dense(self, x: Array, name: str) -> Array:
        """Apply a linear layer stored as PyTorch does (out, in)."""
        weight = self._w[name + ".weight"]
        if isinstance(weight, Rows):
            return weight.apply(x) + self._p(name + ".bias")
        return x @ weight.T + self._p(name + ".bias")

    def _attention(self, x: Array, mask: Array, prefix: str) -> Array:
        """Apply one layer's self-attention to a batch (batch, tokens, hidden)."""
        batch, tokens, hidden = x.shape
        size = hidden // self._heads

        def heads(name: str) -> Array:
            projected = self._dense(x, f"{prefix}.attention.self.{name}")
            return projected.reshape(batch, tokens, self._heads, size).transpose(0, 2, 1, 3)

        scores = heads("query") @ heads("key").transpose(0, 1, 3, 2) / np.sqrt(size)
        weights = _softmax(scores + mask)
        context = (weights @ heads("value")).transpose(0, 2, 1, 3).reshape(batch, tokens, hidden)
        out = self._dense(context, f"{prefix}.attention.output.dense")
        ln = f"{prefix}.attention.output.LayerNorm"
        return _layer_norm(x + out, self._p(ln + ".weight"), self._p(ln + ".bias"), self._eps)

    def _layer(self, x: Array, mask: Array, index: int) -> Array:
        """Apply one encoder layer: attention, then the feed-forward block."""
        prefix = f"encoder.layer.{index}"
        x = self._attention(x, mask, prefix)
        inner = _gelu(self._dense(x, f"{prefix}.intermediate.dense"))
        out = self._dense(inner, f"{prefix}.output.dense")
        ln = f"{prefix}.output.LayerNorm"
        return _layer_norm(x + out, self._p(ln + ".weight"), self._p(ln + ".bias"), self._eps)

    def encode(self, texts: Sequence[str]) -> Array:
        """Return one unit vector (float32) per text, in order."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        keep = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        positions = np.arange(ids.shape[1])
        x = (
            self._rows("embeddings.word_embeddings.weight", ids)
            + self._rows("embeddings.position_embeddings.weight", positions)
            + self._rows("embeddings.token_type_embeddings.weight", np.zeros(1, dtype=np.int64))
        )
        ln = "embeddings.LayerNorm"
        x = _layer_norm(x, self._p(ln + ".weight"), self._p(ln + ".bias"), self._eps)
        mask = ((1.0 - keep) * -1e9)[:, None, None, :].astype(np.float32)
        for index in range(self._layers):
            x = self._layer(x, mask, index)
        pooled = (x * keep[:, :, None]).sum(1) / np.maximum(keep.sum(1, keepdims=True), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: Array = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return unit
