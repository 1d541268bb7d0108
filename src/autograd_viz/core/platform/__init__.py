"""The app on a machine: user data folders, preferences, autosave, reading source files,
starting our own command again, and pausing garbage collection."""
