"""Figures for the book: one palette, one style, curvature shown the same way everywhere.

A package of modules by concern, every public name re-exported here
(``from curvlab.plotting import X``): :mod:`~curvlab.plotting.style` (palette, colormap,
rcParams), :mod:`~curvlab.plotting.inputs` (what figures accept),
:mod:`~curvlab.plotting.curvature_maps` (curvature surfaces and maps),
:mod:`~curvlab.plotting.checks` (a chapter's table of checks),
:mod:`~curvlab.plotting.experiments` (Part II figures), :mod:`~curvlab.plotting.depth` (the depth
study's figures), :mod:`~curvlab.plotting.step_errors` (finite-difference errors),
:mod:`~curvlab.plotting.spikes` (where a trained sheet's ∫|K| dA lives),
:mod:`~curvlab.plotting.language_model` (the language-model study's figures),
:mod:`~curvlab.plotting.realdata` (the real-data study's figures).

- :data:`COLORS`  the book-wide categorical colours (Okabe–Ito, colour-blind safe): ungated
  attention is always blue, gated attention always vermillion, ablations green, references black.
- :data:`CURVATURE_CMAP`  the diverging colormap for curvature (ColorBrewer ``RdBu`` reversed,
  colour-blind safe): K > 0 red, K < 0 blue, K = 0 white.
- :func:`curvature_norm`  a colour normalisation symmetric about K = 0, so white always means flat.
- :func:`use_book_style` / :data:`BOOK_STYLE`  the rcParams every figure is drawn with.
- :func:`plot_curvature_surface`  a 3-D surface coloured by its curvature, with a labelled colorbar.
- :func:`plot_curvature_map`  the same curvature as a flat map over the chart, K = 0 contour drawn.
- :class:`CheckTable`  a chapter's checks in one table (claim, measured, rule, outcome).
- Part II: :func:`plot_forest` (effects with CIs), :func:`plot_curvature_accuracy` with
  :func:`linear_fit_band` (a fit and its confidence band), :func:`plot_decision_boundaries`
  (several classifiers side by side), :func:`plot_loss_curves`, :func:`plot_task_effects`,
  :func:`plot_sweep`, :func:`write_figures` (the study's PNG files), and the depth study's
  :func:`plot_poole_anchor`, :func:`plot_structured_law`, :func:`plot_depth_study`; and
  :func:`plot_step_errors` (a finite-difference error against its step);
  :func:`plot_curvature_spikes` (a trained sheet's spikes of |K| and the collapse of σ_max),
  :func:`plot_spike_counts` (a study's adaptive ∫|K| dA per sheet, in units of 2π);
  :func:`plot_curvature_against_closed_form` (the engine's K beside its error on known surfaces).
- Part III: :func:`plot_lm_by_variant` (a language-model run's number by variant) and
  :func:`plot_lm_per_layer` (a per-layer measure by variant), with :func:`seed_interval`;
  the real-data study's :func:`plot_realdata_accuracy` (with :func:`mean_intervals`) and
  :func:`plot_realdata_curvature`.

Inputs may be NumPy arrays, nested lists or (detached or not) PyTorch tensors; they are converted
to float64 NumPy arrays. Every function returns the matplotlib objects it made and never calls
``plt.show()``, so chapters and tests decide what to do with the figure.
"""

from curvlab.plotting.checks import CheckTable
from curvlab.plotting.curvature_maps import (
    curvature_norm,
    plot_curvature_map,
    plot_curvature_surface,
)
from curvlab.plotting.depth import plot_depth_study, plot_poole_anchor, plot_structured_law
from curvlab.plotting.engine_checks import plot_curvature_against_closed_form
from curvlab.plotting.experiments import (
    linear_fit_band,
    plot_curvature_accuracy,
    plot_decision_boundaries,
    plot_forest,
    plot_loss_curves,
    plot_sweep,
    plot_task_effects,
    write_figures,
)
from curvlab.plotting.language_model import plot_lm_by_variant, plot_lm_per_layer, seed_interval
from curvlab.plotting.realdata import (
    mean_intervals,
    plot_realdata_accuracy,
    plot_realdata_curvature,
)
from curvlab.plotting.spikes import plot_curvature_spikes, plot_spike_counts
from curvlab.plotting.step_errors import plot_step_errors
from curvlab.plotting.style import BOOK_STYLE, COLORS, CURVATURE_CMAP, use_book_style

__all__ = [
    "BOOK_STYLE",
    "COLORS",
    "CURVATURE_CMAP",
    "CheckTable",
    "curvature_norm",
    "linear_fit_band",
    "mean_intervals",
    "plot_curvature_against_closed_form",
    "plot_curvature_accuracy",
    "plot_curvature_map",
    "plot_curvature_surface",
    "plot_decision_boundaries",
    "plot_depth_study",
    "plot_forest",
    "plot_lm_by_variant",
    "plot_lm_per_layer",
    "plot_loss_curves",
    "plot_sweep",
    "plot_task_effects",
    "plot_poole_anchor",
    "plot_realdata_accuracy",
    "plot_realdata_curvature",
    "plot_curvature_spikes",
    "plot_spike_counts",
    "plot_step_errors",
    "plot_structured_law",
    "seed_interval",
    "use_book_style",
    "write_figures",
]
