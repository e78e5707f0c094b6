#!/usr/bin/env python3
"""Polynomial coefficients of include/cudakit/random/detail/transcendental.hpp (float paths).

Near-minimax fits by Chebyshev approximation at 60 digits (mpmath.chebyfit), printed as float
literals in Horner order (constant term first). Needs mpmath (`pip install mpmath`); it is a
development tool, not part of the build. The accuracy of the rounded coefficients, evaluated
with float fma exactly as the header does, is measured by tests/random/distributions_test.cpp.

  log2(1 + f) / f            on f in [sqrt(1/2) - 1, sqrt(2) - 1]      (Note [Transcendental design])
  k sin(pi t) / t, k cos(pi t) as polynomials in y = t^2 on [0, 1/4], k = sqrt(2 ln 2)
                             (Note [Box-Muller radius])
"""
import sys

import mpmath as mp

mp.mp.dps = 60


def fit(f, a, b, degree):
    coeffs, err = mp.chebyfit(f, [a, b], degree + 1, error=True)
    return list(reversed(coeffs)), err  # chebyfit gives the highest power first


def show(name, coeffs, err):
    lits = ", ".join(mp.nstr(c, 17, min_fixed=1, max_fixed=0) + "f" for c in coeffs)
    print(f"// {name}: degree {len(coeffs) - 1}, fit error {mp.nstr(err, 3)}")
    print(f"  {lits}")


def main():
    log_degree = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    q = lambda f: mp.log1p(f) / (f * mp.log(2)) if f != 0 else 1 / mp.log(2)
    show("log2(1 + f) / f", *fit(q, mp.sqrt(0.5) - 1, mp.sqrt(2) - 1, log_degree))
    k = mp.sqrt(2 * mp.log(2))
    s = lambda y: k * mp.sin(mp.pi * mp.sqrt(y)) / mp.sqrt(y) if y != 0 else k * mp.pi
    c = lambda y: k * mp.cos(mp.pi * mp.sqrt(y))
    show("k sin(pi t) / t in t^2", *fit(s, 0, mp.mpf(1) / 4, 4))
    show("k cos(pi t) in t^2", *fit(c, 0, mp.mpf(1) / 4, 4))


if __name__ == "__main__":
    main()
