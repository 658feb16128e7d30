"""Training: batching, learning-rate schedule, the loop, checkpoints."""
