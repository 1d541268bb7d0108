"""Qt widgets of the autograd_viz desktop app."""
