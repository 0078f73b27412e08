"""curvlab: the Fisher-Rao geometry of gated and ungated attention.

The library under the book *Gating Enables Curvature*, in layers, one folder each
(ARCHITECTURE.md):

- :mod:`curvlab.symbolic`  SymPy: Fisher information, pullback metrics, curvature tensors,
  symbolic attention maps.
- :mod:`curvlab.geometry`  PyTorch (``torch.func``): the same curvatures for any differentiable
  map, batched over points (Gauss equation); finite differences, quadrature, sheet measures,
  closed-form surfaces.  :mod:`curvlab.curvature` is its public API.
- :mod:`curvlab.models`    attention layers and classifiers, synthetic tasks, training,
  vectorised ensembles, the curvature of a model's representation sheet.
- :mod:`curvlab.analysis`  statistics and verdicts over tidy records.
- :mod:`curvlab.studies`   the book's studies, cached, as functions returning tidy results.
- :mod:`curvlab.plotting`  figures, Markdown tables and interactive explorers.
- :mod:`curvlab.cli`       ``python -m curvlab``: the studies' command line.

Submodules are imported on demand so that ``import curvlab`` stays cheap.
"""

__version__ = "0.1.0"
