"""Layer 4, measurement: what is measured on trained models, between the models and the analysis.

- :mod:`~curvlab.measurement.sheets`  the curvature of a model's representation sheet on a grid;
- :mod:`~curvlab.measurement.domains`  a data domain fixed independently of the grid, and an
  estimate's grid convergence;
- :mod:`~curvlab.measurement.adaptive_sheets`  ∫|K| dA of an ensemble's sheets on that domain
  by the adaptive rule of :mod:`curvlab.geometry.adaptive`, and where one sheet's integral lives;
- :mod:`~curvlab.measurement.slices`  the sheet over the affine slice through three inputs,
  ∫|K| dA over their triangle;
- :mod:`~curvlab.measurement.language_model`  a trained language model's attention sink,
  largest activations, loss spikes and slice curvature.
"""
