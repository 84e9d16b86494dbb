"""Name the model account's problems (key, model, credits, permission) apart from outages."""

import enum
import logging

from anthropic import (
    APIError,
    APIStatusError,
    AsyncAnthropic,
    AuthenticationError,
    NotFoundError,
    PermissionDeniedError,
)

logger = logging.getLogger(__name__)

# The start-up check asks once more after a network error or a 5xx, then lets the bot start.
CHECK_RETRIES = 1
CHECK_TIMEOUT_SECONDS = 15
# The API's only sign of an account without credits: a 400 with this in its message.
NO_CREDITS_WORDS = "credit balance is too low"


class AccountProblem(enum.Enum):
    """Something only the bot's owner can fix on the Anthropic account; retrying never helps."""

    WRONG_KEY = "the Anthropic API key (ANTHROPIC_API_KEY) is not valid"
    UNKNOWN_MODEL = "the model (ANTHROPIC_MODEL) does not exist or this key cannot use it"
    NO_CREDITS = "the Anthropic account has no credits left"
    NO_PERMISSION = "the Anthropic API key has no permission to use the model"


class AccountError(Exception):
    """The key or the model is wrong: the bot cannot answer anyone until its owner fixes it."""


def account_problem(error: BaseException) -> AccountProblem | None:
    """Return the account problem an API error names, or None for an outage or anything else."""
    if not isinstance(error, APIStatusError):
        return None
    if isinstance(error, AuthenticationError):
        return AccountProblem.WRONG_KEY
    if isinstance(error, PermissionDeniedError):
        return AccountProblem.NO_PERMISSION
    message = (error.api_message or "").lower()
    if isinstance(error, NotFoundError) and message.startswith("model:"):
        return AccountProblem.UNKNOWN_MODEL
    if error.status_code == 402 or error.type == "billing_error":
        return AccountProblem.NO_CREDITS
    if error.status_code == 400 and NO_CREDITS_WORDS in message:
        return AccountProblem.NO_CREDITS
    return None


def describe(problem: AccountProblem, error: APIStatusError) -> str:
    """Return the log line for an account problem: what it is, and the API's own words."""
    return f"{problem.value} (the API answered {error.status_code}: {error.api_message or error})"


async def check_account(client: AsyncAnthropic, model: str) -> None:
    """Raise AccountError when the key is refused or the model is unknown or retired.

    Anything else (no network, an outage, no permission to list models) is logged and the
    bot starts: the SDK retries outages, and each message names an account problem it meets.
    """
    quick = client.with_options(max_retries=CHECK_RETRIES, timeout=CHECK_TIMEOUT_SECONDS)
    try:
        info = await quick.models.retrieve(model)
    except AuthenticationError as error:
        raise AccountError(describe(AccountProblem.WRONG_KEY, error)) from None
    except NotFoundError as error:
        if error.type != "not_found_error":
            # Not the API's answer (a proxy's page at a wrong ANTHROPIC_BASE_URL, say).
            logger.warning("could not check the Anthropic key and model at start-up: %s", error)
            return
        raise AccountError(
            f"ANTHROPIC_MODEL {model!r} is not a model this API key can use "
            f"(the API answered 404: {error.api_message or error})"
        ) from None
    except APIError as error:
        logger.warning("could not check the Anthropic key and model at start-up: %s", error)
        return
    # Older API versions leave the lifecycle out.
    lifecycle = getattr(info, "lifecycle", None)
    if lifecycle == "retired":
        raise AccountError(f"ANTHROPIC_MODEL {model!r} is retired: choose a current model")
    if lifecycle == "deprecated":
        logger.warning("ANTHROPIC_MODEL %r is deprecated; it will be retired", model)
    logger.info("model %s (%s)", info.id, info.display_name)
