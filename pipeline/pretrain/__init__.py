"""Pre-training (SPEC §3): token datasets, masking collators, MiSAD / NSP / SOP objectives, the training loop."""
