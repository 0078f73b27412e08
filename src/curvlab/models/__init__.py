"""Layer 2, models: attention layers and classifiers, synthetic tasks, training.

- :mod:`~curvlab.models.attention`  ungated and gated attention, classifiers, ``VARIANTS``;
- :mod:`~curvlab.models.language_model`  a small decoder-only transformer with those layers;
- :mod:`~curvlab.models.corpus`  its corpus: the pinned SymPy's docstrings, split by file;
- :mod:`~curvlab.models.point_map`  the gated attention read-out of one point (the gates);
- :mod:`~curvlab.models.tasks`  seeded synthetic classification tasks (``TASKS``);
- :mod:`~curvlab.models.real_data`  bundled real datasets as binary token tasks (``DATASETS``);
- :mod:`~curvlab.models.training`  fitting and evaluation, the device;
- :mod:`~curvlab.models.ensemble`  many seeds of one model trained as one vectorised ensemble;
- :mod:`~curvlab.models.convergence`  the convergence criterion and the retraining ladder;
- :mod:`~curvlab.models.sheets`  the curvature measures of a model's representation sheet.
"""
