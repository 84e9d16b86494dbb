"""Each HTTP library's TLS context is made once per process, not once per client."""

from types import SimpleNamespace

from bot.app import build_application, telegram_tls
from bot.compose import model_tls
from tests.builders import sqlite_url
from tests.harness import make_settings


def test_applications_built_in_one_process_share_one_context_per_library(tmp_path):
    endpoint = SimpleNamespace(token="1:x", api_key="k", base_url="http://127.0.0.1:9/")
    settings = make_settings(endpoint, endpoint, sqlite_url(tmp_path / "bot.db"))
    telegram, model = telegram_tls.cache_info(), model_tls.cache_info()
    for _ in range(2):
        build_application(settings)
    # PTB's request and getUpdates request, and the SDK's client, of each Application.
    assert telegram_tls.cache_info().hits + telegram_tls.cache_info().misses >= (
        telegram.hits + telegram.misses + 4
    )
    assert model_tls.cache_info().hits + model_tls.cache_info().misses >= (
        model.hits + model.misses + 2
    )
    assert telegram_tls.cache_info().currsize == model_tls.cache_info().currsize == 1
    assert telegram_tls() is not model_tls()  # each library's own trust store
