"""Wire search by meaning: the embedder the settings choose, the store's hook, the search."""

import importlib.util
import os

from bot.conversations.search import ConversationSearch
from bot.conversations.store import ConversationStore
from bot.settings import Settings
from memory.embeddings import ApiEmbedder, Embedder, local_embedder


def embedder_of(settings: Settings) -> Embedder | None:
    """Return the embeddings API when set, else the local model when installed, else None."""
    if importlib.util.find_spec("numpy") is None:
        return None  # the vectors are compared with NumPy: the embeddings extra brings it
    if settings.embeddings_base_url and settings.embeddings_model and settings.embeddings_api_key:
        key = settings.embeddings_api_key.get_secret_value()
        return ApiEmbedder(settings.embeddings_base_url, key, settings.embeddings_model)
    return local_embedder()


def conversation_search(settings: Settings, conversations: ConversationStore) -> ConversationSearch:
    """Return the search, by words and meaning when an embedder is there; hook the store."""
    sessionmaker = conversations.sessionmaker
    embedder = embedder_of(settings)
    if embedder is None:
        return ConversationSearch(sessionmaker)
    # One BLAS thread, unless set otherwise, before NumPy loads: on a busy host a threaded
    # BLAS waits for its second thread, and a question's vector took 10 times longer (3.7 s
    # against 0.37 s at a load of 21 on 2 cores).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from bot.conversations.vectors import TurnVectors

    vectors = TurnVectors(sessionmaker, embedder)
    conversations.stored = vectors.poke
    conversations.changed = vectors.changed
    conversations.closing.append(vectors.close)
    return ConversationSearch(sessionmaker, vectors)
