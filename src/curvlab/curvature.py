"""The public torch curvature API, at its documented import path.

Everything lives in :mod:`curvlab.curvature`; this module re-exports its public names
so that ``from curvlab.curvature import gaussian_curvature`` keeps working.
"""

from curvlab.geometry.curvature import *  # noqa: F403
from curvlab.geometry.curvature import __all__  # noqa: F401
