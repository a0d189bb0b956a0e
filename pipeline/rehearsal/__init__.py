"""Dress rehearsal of the paper configs on CPU: tiny random stand-ins of their hub models, served by a local hub."""
