"""What a learner works through: the lab (its tasks and predictions), the exercises (their
catalog, checks and the child process that runs them), lessons, the quiz and progress.
Modules here import torch only where they compute: the GUI lists exercises without it."""
