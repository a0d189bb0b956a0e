"""Jobs that do not outlive their Snakemake.

Snakemake starts each local job as ``bash -c "<prefix><command>"`` in its own process group;
when Snakemake is killed with SIGKILL it cannot stop them, and they run on as orphans
(writing to temporaries that the rerun then throws away). :data:`SHELL_PREFIX` starts a
small watchdog beside each job: it polls, every two seconds, whether the job's parent
(Snakemake, ``$PPID`` of the job shell) still exists, and when it is gone stops the job
shell (so that it runs no further command), sends SIGTERM to its children (the stage, or
torchrun, which stops its workers) and kills the shell. It ends by itself when the job does. POSIX ``sh`` syntax; needs ``pkill`` (procps), and does nothing without it.
"""

from __future__ import annotations

SHELL_PREFIX = (
    "_ulr_job=$$; _ulr_parent=$PPID; "
    "( trap '' TERM; while kill -0 $_ulr_parent 2>/dev/null && kill -0 $_ulr_job 2>/dev/null; do sleep 2; done; "
    "if kill -0 $_ulr_job 2>/dev/null; then kill -STOP $_ulr_job; pkill -TERM -P $_ulr_job; kill -KILL $_ulr_job; fi"
    " ) >/dev/null 2>&1 & "
)
