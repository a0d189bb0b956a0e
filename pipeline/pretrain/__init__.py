"""Pre-training (docs/method.md §3): token datasets, masking collators, MiSAD / NSP / SOP objectives, the training loop."""
