"""Independent oracles: LLVM 22's own tools, and readers of what they print."""
