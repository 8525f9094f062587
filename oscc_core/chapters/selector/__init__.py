"""Chapter 4, the selector: gradient-aware coupling selection with Theorem 1's certificate.

Per own-card stratum of a Leduc root, OSCC-Select certifies a coupling when
the Hoeffding lower bound on its gain over independent sampling is positive
(gains and noise in chips^2 per unit logit^2, "noise units"), RV-Select picks
the smallest mean pairwise contrast variance (chips^2) and Oracle-Select the
exact noise minimiser.  The package computes the selectors at a two-action and
a three-action root, under three covariance regimes and over a sweep of
calibration sizes (groups per stratum), and a scan over root policies;
``notebooks/04_selector.ipynb`` calls it and shows its tables and figures.
"""
