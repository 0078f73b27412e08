"""curvlab: the Fisher-Rao geometry of gated and ungated attention.

The library under the book *Gating Enables Curvature*. Modules, one concern each:

- :mod:`curvlab.symbolic`    SymPy: Fisher information, pullback metrics, curvature tensors,
  symbolic attention maps.
- :mod:`curvlab.curvature`   PyTorch (``torch.func``): the same curvatures for any
  differentiable map, batched over points (Gauss equation).
- :mod:`curvlab.geometry.finite_differences`  the cheap proxy: curvature from finite differences.
- :mod:`curvlab.geometry.measures`    scale-free summaries: area, total absolute curvature, K·A,
  Grassmannian length of curves.
- :mod:`curvlab.studies.engine_benchmark`  ``make bench``: the engine against a Python loop.
- :mod:`curvlab.models.attention`   ungated and gated attention layers and small models.
- :mod:`curvlab.models.tasks`       seeded synthetic classification tasks.
- :mod:`curvlab.models.training`    fitting and evaluation.
- :mod:`curvlab.studies` the book's experiments, as functions returning tidy records.
- :mod:`curvlab.plotting`, :mod:`curvlab.plotting.widgets`  figures and interactive explorers.
- :mod:`curvlab.classroom`   student editions of chapters and autograding.

Submodules are imported on demand so that ``import curvlab`` stays cheap.
"""

__version__ = "0.1.0"
