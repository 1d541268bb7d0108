"""Replay: the forward and backward steps of a trace (`player`), which nodes each backward
freed (`freeing`), and which source line made what (`source_map`)."""
