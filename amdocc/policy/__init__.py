"""Decisions taken without a launch: the KV split count and the asm-prefill route."""
