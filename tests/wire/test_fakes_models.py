"""The fake's Models API and account errors, through the real anthropic SDK."""

import anthropic
import pytest
from anthropic.types import ModelInfo

from tests.fakes.anthropic_models import model_info
from tests.fakes.anthropic_server import NO_CREDITS, NO_PERMISSION, FakeAnthropic
from tests.wire.requests import MODEL, ask


async def test_a_model_is_retrieved_as_the_sdk_declares_it(claude, fa):
    info = await claude.models.retrieve(MODEL)
    assert (info.id, info.type, info.lifecycle) == (MODEL, "model", "active")
    assert info.capabilities is not None and info.capabilities.thinking.types.adaptive.supported
    assert fa.model_lookups == [MODEL]


@pytest.mark.parametrize("lifecycle", ["active", "deprecated", "retired"])
def test_the_model_info_passes_the_sdks_strict_validation(lifecycle):
    # model_validate checks every field (the SDK itself constructs leniently).
    info = ModelInfo.model_validate(model_info("claude-sonnet-test", lifecycle))
    assert info.lifecycle == lifecycle and info.created_at.year == 2025
    assert set(model_info("x")) == set(ModelInfo.model_fields)


async def test_an_unknown_model_is_404_not_found_as_from_the_real_api():
    async with FakeAnthropic(models={"claude-real": "active"}) as fa:
        client = anthropic.AsyncAnthropic(api_key=fa.api_key, base_url=fa.base_url, max_retries=0)
        with pytest.raises(anthropic.NotFoundError) as lookup:
            await client.models.retrieve("claude-nope")
        with pytest.raises(anthropic.NotFoundError) as call:
            await client.messages.create(**(ask() | {"model": "claude-nope"}))
        assert (await client.messages.create(**(ask() | {"model": "claude-real"}))).content
    for raised in (lookup.value, call.value):
        assert raised.type == "not_found_error" and raised.api_message == "model: claude-nope"
        assert raised.body["error"] == {"type": "not_found_error", "message": "model: claude-nope"}


async def test_a_wrong_key_is_401_on_the_models_api_too(fa):
    client = anthropic.AsyncAnthropic(api_key="sk-ant-wrong", base_url=fa.base_url, max_retries=0)
    with pytest.raises(anthropic.AuthenticationError) as raised:
        await client.models.retrieve(MODEL)
    assert raised.value.type == "authentication_error"
    assert raised.value.api_message == "invalid x-api-key"


@pytest.mark.parametrize(
    ("problem", "error_class", "status"),
    [
        (NO_CREDITS, anthropic.BadRequestError, 400),
        (NO_PERMISSION, anthropic.PermissionDeniedError, 403),
    ],
)
async def test_an_account_error_answers_every_call_until_lifted(
    claude, fa, problem, error_class, status
):
    fa.account_error = problem
    for _ in range(2):
        with pytest.raises(error_class) as raised:
            await claude.messages.create(**ask())
        assert raised.value.status_code == status
        assert raised.value.body["error"] == {"type": problem.type, "message": problem.message}
    # Listing a model is not billed: it still answers.
    assert (await claude.models.retrieve(MODEL)).id == MODEL
    fa.account_error = None
    assert (await claude.messages.create(**ask())).content
