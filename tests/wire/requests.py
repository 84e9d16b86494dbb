"""A Messages API request as the wire tests send it."""

MODEL = "claude-test"


def ask(content="hi", **extra):
    """Return a minimal request for one user message, with any extra fields."""
    return {
        "model": MODEL,
        "max_tokens": 100,
        "messages": [{"role": "user", "content": content}],
    } | extra
