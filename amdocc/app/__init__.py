"""The operations a user runs, callable from Python: typed options in, plain records out.

``amdocc.cli`` parses arguments, calls these and renders what they return; the scheduler
(:mod:`amdocc.app.parallel`) and the kernel selection (:mod:`amdocc.app.selection`) live beside
them. This package imports the models, policy, codeobject and containers layers, never the CLI,
and is not imported by ``import amdocc``.
"""
