"""The papers' result tables from metrics JSONs (stage ``tables``), with their published numbers."""
