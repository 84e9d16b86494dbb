"""The NumPy sentence encoder: a tiny BERT made here, and the real model when installed."""

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

from memory.embed_model import SentenceEncoder, read_safetensors
from memory.embeddings import LocalEmbedder, local_model_folder

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "car", "dog", "red", "the", "a"]


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    """Write tensors in the safetensors format: a JSON header, then the raw values."""
    header, blobs, offset = {}, [], 0
    for name, value in tensors.items():
        data = np.ascontiguousarray(value, dtype=np.float32).tobytes()
        header[name] = {
            "dtype": "F32",
            "shape": list(value.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        blobs.append(data)
        offset += len(data)
    encoded = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + b"".join(blobs))


def tiny_model(folder: Path, hidden: int = 8, layers: int = 2, heads: int = 2) -> dict:
    """Write a random two-layer BERT folder (config, weights, tokenizer); return its weights."""
    rng = np.random.default_rng(7)
    w = {
        "embeddings.word_embeddings.weight": rng.normal(size=(len(VOCAB), hidden)),
        "embeddings.position_embeddings.weight": rng.normal(size=(16, hidden)),
        "embeddings.token_type_embeddings.weight": rng.normal(size=(2, hidden)),
        "embeddings.LayerNorm.weight": np.ones(hidden),
        "embeddings.LayerNorm.bias": np.zeros(hidden),
    }
    shapes = {
        "attention.self.query": (hidden, hidden), "attention.self.key": (hidden, hidden),
        "attention.self.value": (hidden, hidden), "attention.output.dense": (hidden, hidden),
        "intermediate.dense": (4 * hidden, hidden), "output.dense": (hidden, 4 * hidden),
    }  # fmt: skip
    for layer in range(layers):
        for name, shape in shapes.items():
            w[f"encoder.layer.{layer}.{name}.weight"] = rng.normal(size=shape) * 0.3
            w[f"encoder.layer.{layer}.{name}.bias"] = rng.normal(size=shape[0]) * 0.1
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[f"encoder.layer.{layer}.{norm}.weight"] = np.ones(hidden)
            w[f"encoder.layer.{layer}.{norm}.bias"] = np.zeros(hidden)
    write_safetensors(folder / "model.safetensors", w)
    config = {"hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": heads}
    (folder / "config.json").write_text(json.dumps(config))
    tokenizer = Tokenizer(models.WordPiece({t: i for i, t in enumerate(VOCAB)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
    tokenizer.save(str(folder / "tokenizer.json"))
    return {name: value.astype(np.float32) for name, value in w.items()}


def reference(w: dict, ids: list[int], layers: int = 2, heads: int = 2) -> np.ndarray:
    """Encode one text's ids the plain way: one token at a time, math.erf's GELU."""
    import math

    def norm(x, name):
        mean, var = x.mean(), x.var()
        return (x - mean) / math.sqrt(var + 1e-12) * w[name + ".weight"] + w[name + ".bias"]

    def dense(x, name):
        return w[name + ".weight"] @ x + w[name + ".bias"]

    words, places = (
        w["embeddings.word_embeddings.weight"],
        w["embeddings.position_embeddings.weight"],
    )
    kind = w["embeddings.token_type_embeddings.weight"][0]
    xs = [norm(words[t] + places[p] + kind, "embeddings.LayerNorm") for p, t in enumerate(ids)]
    size = xs[0].shape[0] // heads
    for layer in range(layers):
        p = f"encoder.layer.{layer}"
        q = [dense(x, f"{p}.attention.self.query") for x in xs]
        k = [dense(x, f"{p}.attention.self.key") for x in xs]
        v = [dense(x, f"{p}.attention.self.value") for x in xs]
        out = []
        for i, x in enumerate(xs):
            context = []
            for h in range(heads):
                part = slice(h * size, (h + 1) * size)
                scores = np.array(
                    [q[i][part] @ k[j][part] / math.sqrt(size) for j in range(len(xs))]
                )
                weights = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
                context.append(sum(weights[j] * v[j][part] for j in range(len(xs))))
            attended = norm(x + dense(np.concatenate(context), f"{p}.attention.output.dense"),
                            f"{p}.attention.output.LayerNorm")  # fmt: skip
            inner = dense(attended, f"{p}.intermediate.dense")
            inner = np.array([0.5 * a * (1 + math.erf(a / math.sqrt(2))) for a in inner])
            out.append(norm(attended + dense(inner, f"{p}.output.dense"), f"{p}.output.LayerNorm"))
        xs = out
    pooled = np.mean(xs, axis=0)
    return pooled / np.linalg.norm(pooled)


def test_the_encoder_computes_bert_and_mean_pooling_as_written_out(tmp_path):
    weights = tiny_model(tmp_path)
    encoder = SentenceEncoder(tmp_path)
    texts = ["the red car", "a dog"]  # padded to one length in the batch: the mask must hold
    vectors = encoder.encode(texts)
    expected = [reference(weights, [2, 7, 6, 4, 3]), reference(weights, [2, 8, 5, 3])]
    assert np.allclose(vectors, expected, atol=1e-5)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert encoder.encode([]).shape == (0, 8)


def test_safetensors_are_read_without_a_copy(tmp_path):
    values = {"a": np.arange(6, dtype=np.float32).reshape(2, 3)}
    write_safetensors(tmp_path / "m.safetensors", values)
    read = read_safetensors(tmp_path / "m.safetensors")
    assert np.array_equal(read["a"], values["a"]) and not read["a"].flags.owndata


@pytest.mark.skipif(local_model_folder() is None, reason="the model is not installed")
async def test_the_installed_model_places_close_sentences_close():
    embedder = LocalEmbedder(local_model_folder() or Path())
    food, bread, baby = await embedder.embed(
        [
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "The girl is carrying a baby.",
        ]
    )
    # sentence-transformers' own figure for this pair with all-MiniLM-L6-v2: 0.7553.
    assert np.dot(food, bread) == pytest.approx(0.7553, abs=2e-3)
    assert np.dot(food, baby) < 0.1
