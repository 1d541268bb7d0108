"""The code side: the editor and its pane, highlighting, find/replace, the document (path,
autosave, recovery) and the console."""
