"""Layer 2, data: what the models are trained on, seeded and deterministic.

- :mod:`~curvlab.data.tasks`  synthetic two-dimensional classification tasks (``TASKS``);
- :mod:`~curvlab.data.realdata`  scikit-learn's bundled datasets as binary token tasks
  (``DATASETS``);
- :mod:`~curvlab.data.corpus`  the language model's corpus: the pinned SymPy's docstrings,
  split by source file, with a character vocabulary and a SHA-256 fingerprint.
"""
