"""Accuracy evaluation: ground truth, metrics, perturbations, corpora, methods and reports.

See ``docs/ACCURACY.md`` for the measured results and ``neardup eval --help`` for the CLI.
"""
