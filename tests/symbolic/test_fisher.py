"""curvlab.symbolic.fisher: the Fisher information derived from the Gaussian log-density."""

import pytest
import sympy as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from curvlab.symbolic import (
    gaussian_curvature,
    gaussian_fisher_information,
    gaussian_log_density,
    pullback_metric,
)
from curvlab.symbolic.fisher import _centered_moment, _gaussian_expectation

LAWS = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])

mu, u, v = sp.symbols("mu u v", real=True)
sigma, a, b = sp.symbols("sigma a b", positive=True)


def is_zero(expr) -> bool:
    if isinstance(expr, sp.MatrixBase):
        return all(sp.simplify(entry) == 0 for entry in expr)
    return sp.simplify(expr) == 0


def test_normal_family_in_mean_and_standard_deviation():
    information = gaussian_fisher_information(mu, sigma**2, [mu, sigma])
    assert is_zero(information - sp.diag(1 / sigma**2, 2 / sigma**2))


def test_normal_family_is_a_hyperbolic_plane_of_curvature_minus_one_half():
    information = gaussian_fisher_information(sp.Matrix([mu]), sp.Matrix([[sigma**2]]), [mu, sigma])
    assert gaussian_curvature(information, [mu, sigma]) == sp.Rational(-1, 2)


def test_normal_family_in_mean_and_variance():
    variance = sp.Symbol("variance", positive=True)
    information = gaussian_fisher_information(mu, variance, [mu, variance])
    assert is_zero(information - sp.diag(1 / variance, 1 / (2 * variance**2)))
    assert gaussian_curvature(information, [mu, variance]) == sp.Rational(-1, 2)


def test_fisher_information_equals_expected_outer_product_of_the_score():
    """−E[∂²log p] = E[∇log p ∇log pᵀ] for a bivariate family whose covariance moves too."""
    mean = sp.Matrix([u, u * v])
    cov = sp.Matrix([[a**2, 0], [0, b**2]])
    params = [u, v, a, b]
    y = sp.symbols("y0:2", real=True)
    log_p = gaussian_log_density(sp.Matrix(y), mean, cov)
    score = [sp.diff(log_p, p) for p in params]
    outer = sp.Matrix(4, 4, lambda m, n: _gaussian_expectation(score[m] * score[n], y, mean, cov))
    assert is_zero(gaussian_fisher_information(mean, cov, params) - outer)


def test_fisher_information_with_moving_covariance_has_the_trace_term():
    """I_mn = ∂_m μᵀ Σ⁻¹ ∂_n μ + ½ tr(Σ⁻¹ ∂_m Σ Σ⁻¹ ∂_n Σ), an independent textbook formula."""
    c = sp.Symbol("c", real=True)
    mean = sp.Matrix([u + c, v * u])
    cov = sp.Matrix([[1 + u**2, c], [c, 2]])
    params = [u, v, c]
    precision = cov.inv()
    J = mean.jacobian(params)
    expected = sp.Matrix(
        3,
        3,
        lambda m, n: (
            (J[:, m].T * precision * J[:, n])[0, 0]
            + (precision * cov.diff(params[m]) * precision * cov.diff(params[n])).trace() / 2
        ),
    )
    assert is_zero(gaussian_fisher_information(mean, cov, params) - expected)


small_rationals = st.builds(
    sp.Rational, st.integers(min_value=-3, max_value=3), st.integers(min_value=1, max_value=3)
)


@LAWS
@given(L=st.lists(small_rationals, min_size=6, max_size=6), shift=small_rationals)
def test_fixed_covariance_gives_the_pullback_metric(L, shift):
    lower = sp.Matrix([[L[0], 0, 0], [L[1], L[2], 0], [L[3], L[4], L[5]]])
    assume(lower.det() != 0)
    cov = lower * lower.T
    mean = sp.Matrix([u, v + shift * u**2, u * v])
    information = gaussian_fisher_information(mean, cov, [u, v])
    J = mean.jacobian([u, v])
    assert is_zero(information - J.T * cov.inv() * J)
    assert is_zero(information - pullback_metric(mean, [u, v], cov=cov))


def test_isserlis_fourth_moments():
    s11, s12, s22 = sp.symbols("s11 s12 s22")
    cov = sp.Matrix([[s11, s12], [s12, s22]])
    assert _centered_moment((4, 0), cov) == 3 * s11**2
    assert sp.expand(_centered_moment((2, 2), cov) - (s11 * s22 + 2 * s12**2)) == 0
    assert _centered_moment((1, 2), cov) == 0


def test_log_density_integrates_to_one():
    y = sp.Symbol("y", real=True)
    density = sp.exp(gaussian_log_density(y, mu, sigma**2))
    assert sp.simplify(sp.integrate(density, (y, -sp.oo, sp.oo))) == 1


# ---------------------------------------------------------------------------------------------
# bad input names the argument


def test_cov_that_is_not_positive_definite_is_rejected():
    with pytest.raises(ValueError, match="cov.*positive definite"):
        gaussian_fisher_information(mu, -(sigma**2), [mu, sigma])
    with pytest.raises(ValueError, match="cov.*positive definite"):
        gaussian_fisher_information(sp.Matrix([u, v]), sp.Matrix([[1, 3], [3, 1]]), [u, v])
    with pytest.raises(ValueError, match="cov.*symmetric"):
        gaussian_fisher_information(sp.Matrix([u, v]), sp.Matrix([[1, 0], [1, 1]]), [u, v])


def test_mean_must_be_a_column_or_scalar():
    with pytest.raises(ValueError, match="mean.*column"):
        gaussian_fisher_information(sp.Matrix([[u, v]]), sp.eye(2), [u, v])
    with pytest.raises(TypeError, match="mean"):
        gaussian_fisher_information([u, v], sp.eye(2), [u, v])


def test_cov_shape_must_match_the_mean():
    with pytest.raises(ValueError, match="cov.*shape"):
        gaussian_fisher_information(sp.Matrix([u, v]), sp.eye(3), [u, v])


def test_params_must_be_distinct_symbols():
    with pytest.raises(TypeError, match="params"):
        gaussian_fisher_information(mu, sigma**2, [mu, 2 * sigma])
    with pytest.raises(ValueError, match="params.*distinct"):
        gaussian_fisher_information(mu, sigma**2, [mu, mu])


def test_a_family_that_does_not_depend_on_its_params_is_refused():
    t1, t2 = sp.symbols("t1 t2", real=True)
    x1 = sp.Symbol("x1", real=True)
    with pytest.raises(ValueError, match="mean, cov: neither depends on the params"):
        gaussian_fisher_information(sp.Matrix([t1, t2]), sp.eye(2), [x1])
