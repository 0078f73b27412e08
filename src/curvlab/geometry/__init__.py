"""Layer 1, geometry: curvature of any differentiable map, in PyTorch (float64, batched).

- :mod:`~curvlab.geometry.gauss_equation`  the shared engine: jets J, H of a map and the Gauss
  equation R_abcd = ⟨II_ac, Σ⁻¹ II_bd⟩ − ⟨II_ad, Σ⁻¹ II_bc⟩;
- :mod:`~curvlab.curvature`  the public API (re-exported as :mod:`curvlab.curvature`):
  metric, second fundamental form, Riemann tensor, sectional, scalar and Gaussian curvature;
- :mod:`~curvlab.geometry.finite_differences`  the cheap proxy: curvature from differences;
- :mod:`~curvlab.geometry.quadrature`  the midpoint rule on a patch;
- :mod:`~curvlab.geometry.adaptive`  integrals of K by a quadtree midpoint rule refined to a
  relative tolerance, for |K| with peaks narrower than a grid cell, many boxes at once;
- :mod:`~curvlab.geometry.density_calls`  how that rule calls its density on a batch of boxes:
  those still refined, grouped by their needs, in whole blocks of points;
- :mod:`~curvlab.geometry.curvature_integrals`  ∫|K| dA, ∫K dA and the area by that rule;
- :mod:`~curvlab.geometry.measures`  scale-free summaries of sheets and curves;
- :mod:`~curvlab.geometry.surfaces`  closed-form test surfaces with their exact K.

Nothing here knows about attention, training or studies.
"""
