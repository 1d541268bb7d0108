"""The graph tab: the canvas, its player bar, the inspector, node search and the exports."""
