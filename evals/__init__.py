"""The evaluation of memory behaviour: real bot code against the real Messages API.

`python -m evals` plays each case (evals/cases/) through the real ChatService, Agent and
Compactor on a temporary SQLite database, scores each trial by rules (evals/rules/), and prints
a table and, with --report, JSONL. It needs ANTHROPIC_API_KEY and spends money; without the key
it says so and exits 0.

Imports: evals may import bot and memory (it builds the services as the bot does), never
tests (the fakes live there) nor telegram directly. Nothing imports evals but its own tests
(tests/evals/).
"""
