"""The engine at run time: Session (session.py) plans per input shape and runs; the scheduler
places ops on backends, the fusion pass lets a backend fuse its placed ops, the program builder
turns a plan into steps, arenas and a compiled Program (program.py walks the ops, program_steps.py
compiles; plan.py holds what a plan records), the run loop (_runloop.pyx) walks it without the GIL.
Also: the Session's arguments (session_args.py), its choice of backends (backend_choice.py), a run's
inputs (feeds.py), released weights (weights.py), batches run as images (batch_split.py), model
loading by suffix (loader.py). The memory planner is mnn_core.memory.

Backends never import this package: what they need is in mnn_core.backend.
"""
