"""Adapters from other tools' compiled kernels to amdocc (each imports its tool lazily)."""
