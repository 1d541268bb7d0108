"""What runs in the kernel process: the protocol the app speaks to it, the runner that
executes a script under capture, and the script context (`python FILE` semantics, limits,
output budget). `protocol` is also imported by the app, and imports no torch at module level.
"""
