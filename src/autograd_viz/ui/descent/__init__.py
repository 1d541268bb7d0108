"""The descent tab: loss surface, paths for every learning rate, the slider and its ticks."""
