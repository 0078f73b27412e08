"""Layer 3, models: attention layers, classifiers and a language model, and their training.

- :mod:`~curvlab.models.attention`  ungated and gated attention, classifiers, ``VARIANTS``;
- :mod:`~curvlab.models.language_model`  a small decoder-only transformer with those layers;
- :mod:`~curvlab.models.point_map`  the gated attention read-out of one point (the gates);
- :mod:`~curvlab.models.training`  fitting and evaluation, the device;
- :mod:`~curvlab.models.ensemble`  many seeds of one model trained as one vectorised ensemble;
- :mod:`~curvlab.models.convergence`  the convergence criterion and the retraining ladder.
"""
