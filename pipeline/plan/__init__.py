"""The GPU-hours plan: the cost model and, per published row, the jobs that reproduce it."""
