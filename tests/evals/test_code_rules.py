"""The rules the code keeps hold in the bot's own code (the mutation test breaks copies of it)."""

from memory.proposals import asking_bound
from memory.tools.memory_tools import add_to_memory
from tests.evals.code_rules import asking_bound_breaks, duplicate_subject_breaks


def test_the_bounds_on_asking_hold():
    assert asking_bound_breaks(asking_bound) == []


async def test_a_second_memory_with_a_subject_already_kept_is_refused(store, switch):
    assert await duplicate_subject_breaks(add_to_memory, store, switch) == []
