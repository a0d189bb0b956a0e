"""The GPU budget model (ground floor): what a training job computes and holds on a GPU.

- :mod:`.cost`: the shapes of the papers' backbones, the training FLOPs of a workload, the GPU-hours they
  take at a stated utilisation, and the per-step floor of a small step; ``workloads.yaml``, the measured
  inputs (tokens per example, padding shares, floors, a multiple-choice example's candidates);
- :mod:`.memory`: the GPU memory of a training job, and the most fused runs one GPU holds.

It is read by the plan (:mod:`pipeline.plan`), by the grouping of fused runs (:mod:`pipeline.fused_groups`,
which the classify rules read to cap a job's stack) and by the benchmarks. It imports only the ground-floor
modules (the backbone families) and itself, never a stage package.
"""
