"""The GPU acceptance run: a paper run's paths checked on a lent GPU host, and what the budget needs measured there
(docs/stages/acceptance.md)."""
