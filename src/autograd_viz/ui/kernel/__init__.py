"""The kernel in the window: its status, connecting to a remote kernel, the device picker."""
