"""Evaluation on LoCoMo (DESIGN.md §7).

- :mod:`ramem_local.eval.locomo` loads the questions and repairs their dirty evidence ids;
- :mod:`ramem_local.eval.metrics` holds the retrieval (R@K, all-evidence R@K, MRR, D@1) and answer
  (token F1, BLEU-1, set F1) metrics as pure functions, so every report computes them one way.
"""
