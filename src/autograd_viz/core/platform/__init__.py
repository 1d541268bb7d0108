"""The app on a machine: user data folders, preferences, autosave, reading source files,
starting our own command again, the processes a run started, a user's file that hides
PyTorch, and pausing garbage collection."""
