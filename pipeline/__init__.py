"""Universal language representation pipeline (BURT / ULR-BERT reproduction).

The importable package behind the Snakemake workflow: every rule calls one
``python -m pipeline STAGE`` entry point, and all logic lives here.
"""

__version__ = "0.1.0"
