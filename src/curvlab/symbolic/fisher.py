"""Fisher information of a Gaussian family, derived from its log-density.

For y ~ N(μ(θ), Σ(θ)) in ℝ^d the log-density is

    log p(y | θ) = −d/2 log 2π − ½ log det Σ − ½ (y − μ)ᵀ Σ⁻¹ (y − μ),

and the Fisher information is I(θ)_mn = −E[∂_m ∂_n log p] = E[∂_m log p ∂_n log p].  This module
builds log p symbolically, differentiates it, and takes the expectation exactly with the Gaussian
moments (Isserlis' theorem), so nothing is typed in: the two textbook special cases come out of
the computation,

- Σ fixed: I = Jᵀ Σ⁻¹ J with J = ∂μ/∂θ (the pullback metric, see ``pullback_metric``);
- Σ depending on θ: the extra term ½ tr(Σ⁻¹ ∂_m Σ Σ⁻¹ ∂_n Σ), e.g. diag(1/σ², 2/σ²) for N(μ, σ²)
  in (μ, σ), the hyperbolic plane of curvature −1/2.
"""

from __future__ import annotations

import sympy as sp

from curvlab.symbolic.linear_algebra import determinant, inverse
from curvlab.symbolic.simplification import simplify
from curvlab.symbolic.validation import as_coords, as_cov, check_coordinate_names

__all__ = ["gaussian_fisher_information", "gaussian_log_density"]


def _as_mean(mean) -> sp.Matrix:
    if isinstance(mean, sp.MatrixBase):
        if mean.shape[1] != 1:
            raise ValueError(f"mean: expected a column matrix of shape (d, 1), got {mean.shape}")
        return sp.Matrix(mean)
    if isinstance(mean, (list, tuple)):
        raise TypeError("mean: expected a SymPy column Matrix (d, 1) or a scalar, got a list")
    try:
        return sp.Matrix([sp.sympify(mean, strict=True)])
    except sp.SympifyError:
        raise TypeError(
            f"mean: expected a SymPy column Matrix (d, 1) or a scalar, got {type(mean).__name__}"
        ) from None


def gaussian_log_density(y, mean, cov) -> sp.Expr:
    """log N(y; mean, cov) = −d/2 log 2π − ½ log det Σ − ½ (y − μ)ᵀ Σ⁻¹ (y − μ).

    ``y`` and ``mean`` are column matrices (d×1) or scalars, ``cov`` a d×d Matrix or a scalar
    (d = 1), symmetric positive definite.

    >>> import sympy as sp
    >>> y, mu = sp.symbols("y mu", real=True)
    >>> sigma = sp.Symbol("sigma", positive=True)
    >>> from sympy.stats import Normal, density
    >>> log_p = gaussian_log_density(y, mu, sigma**2)
    >>> sp.simplify(log_p - sp.log(density(Normal("Y", mu, sigma))(y))) == 0
    True
    """
    mu = _as_mean(mean)
    point = _as_mean(y)
    d = mu.shape[0]
    if point.shape != mu.shape:
        raise ValueError(f"y: expected shape {mu.shape} like the mean, got {point.shape}")
    sigma = as_cov(cov, d)
    precision = inverse(sigma)
    residual = point - mu
    quadratic = (residual.T * precision * residual)[0, 0]
    log_det = sp.log(simplify(determinant(sigma.tolist())))
    return -sp.Rational(d, 2) * sp.log(2 * sp.pi) - log_det / 2 - quadratic / 2


def _perfect_matchings(indices: list[int]):
    """All ways to split ``indices`` into unordered pairs (Isserlis' theorem)."""
    if not indices:
        yield []
        return
    first, rest = indices[0], indices[1:]
    for position, partner in enumerate(rest):
        remaining = rest[:position] + rest[position + 1 :]
        for matching in _perfect_matchings(remaining):
            yield [(first, partner), *matching]


def _centered_moment(exponents, cov: sp.Matrix) -> sp.Expr:
    """E[z₀^e₀ ⋯ z_{d−1}^e_{d−1}] for z ~ N(0, cov): the sum over pairings of Π cov_ij."""
    indices = [i for i, e in enumerate(exponents) for _ in range(e)]
    if len(indices) % 2:
        return sp.S.Zero
    return sp.Add(
        *[sp.Mul(*[cov[i, j] for i, j in matching]) for matching in _perfect_matchings(indices)]
    )


def _gaussian_expectation(expr, y, mean: sp.Matrix, cov: sp.Matrix) -> sp.Expr:
    """E[expr(y)] for y ~ N(mean, cov), exactly, when ``expr`` is a polynomial in ``y``.

    Writes y = mean + z, expands in z and replaces every monomial by its Gaussian moment.
    """
    z = sp.symbols(f"z0:{len(y)}", cls=sp.Dummy)
    shifted = sp.expand(sp.sympify(expr).subs(dict(zip(y, mean + sp.Matrix(z), strict=True))))
    polynomial = sp.Poly(shifted, *z)
    return sp.Add(
        *[coeff * _centered_moment(exponents, cov) for exponents, coeff in polynomial.terms()]
    )


def gaussian_fisher_information(mean, cov, params) -> sp.Matrix:
    """Fisher information I(θ)_mn = −E[∂_m ∂_n log p(y | θ)] of y ~ N(mean(θ), cov(θ)).

    Derived, not typed in: the log-density is differentiated twice in ``params`` and the
    expectation taken exactly (the Hessian is a quadratic polynomial in y; its expectation uses
    E[y] = μ and E[(y − μ)(y − μ)ᵀ] = Σ).  Under the Gaussian's regularity this equals
    E[∇log p ∇log pᵀ].  ``mean`` is a column Matrix (d×1) or a scalar, ``cov`` a d×d Matrix or a
    scalar (d = 1), symmetric positive definite, and either may depend on ``params`` (a sequence
    of k distinct Symbols).  With a fixed ``cov`` the result is Jᵀ cov⁻¹ J.

    >>> import sympy as sp
    >>> mu = sp.Symbol("mu", real=True)
    >>> sigma = sp.Symbol("sigma", positive=True)
    >>> gaussian_fisher_information(mu, sigma**2, [mu, sigma])
    Matrix([
    [sigma**(-2),          0],
    [          0, 2/sigma**2]])
    """
    params = as_coords(params, "params")
    mu = _as_mean(mean)
    d = mu.shape[0]
    sigma = as_cov(cov, d)
    check_coordinate_names([*mu, *sigma], params, "mean, cov")
    y = sp.symbols(f"y0:{d}", cls=sp.Dummy, real=True)
    log_density = gaussian_log_density(sp.Matrix(y), mu, sigma)
    k = len(params)
    information = sp.zeros(k, k)
    for m in range(k):
        score_m = sp.diff(log_density, params[m])
        for n in range(m, k):
            hessian_mn = sp.diff(score_m, params[n])
            entry = simplify(-_gaussian_expectation(hessian_mn, y, mu, sigma))
            information[m, n] = information[n, m] = entry
    if information.is_zero_matrix:
        raise ValueError(
            "mean, cov: neither depends on the params (the Fisher information is identically "
            "zero); write them in the params passed"
        )
    return information
