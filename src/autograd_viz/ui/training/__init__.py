"""The Training view: gradient health over a training loop."""
