"""Cooldown: once per key per window, forgetting expired keys, silent when full."""

from bot.telegram.runtime.cooldown import Cooldown


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_key_goes_through_once_per_window():
    clock = Clock()
    cooldown = Cooldown(600, 10, clock)
    assert cooldown.take("a") and cooldown.take("b")
    clock.now += 599.9
    assert not cooldown.take("a") and not cooldown.take("b")
    clock.now += 0.1
    assert cooldown.take("a")
    assert not cooldown.take("a")


def test_expired_keys_are_forgotten_and_a_full_cooldown_lets_none_through():
    clock = Clock()
    cooldown = Cooldown(600, 3, clock)
    assert [cooldown.take(key) for key in range(5)] == [True, True, True, False, False]
    assert len(cooldown) == 3
    clock.now += 600
    assert cooldown.take(99) and len(cooldown) == 1
    clock.now += 600
    assert [cooldown.take(key) for key in range(5)] == [True, True, True, False, False]
