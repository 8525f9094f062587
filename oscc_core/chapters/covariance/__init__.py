"""Chapter 02, return-contrast covariance: paired audits of the five coupling arms, pooled over Leduc roots and at one.

The package computes what ``notebooks/02_covariance.ipynb`` reports: the
contrast variance Var(R_1 - R_2) of every coupling arm with its paired
root-bootstrap interval and exact value, the marginal-equivalence test, the
variance identity, the 2x2 coupling ablation, the seed, stratum and budget
tables, the exact constructions that measure how the reduction moves with
the continuation policy, the settings of the paper's runs (`settings`), the
paper numbers it does not compare (`not_compared`) and the chapter's
findings (`findings`).  The paper's headline audit is labelled "all roots":
its tables are compared with the pooled audit over every decision point with a
check-bet contrast (`pooled`); the one-root audit and alternative
constructions give sensitivity rows only.
Units: returns and means in chips, variances and covariances in chips^2,
ratios unitless, reductions in percent.
"""
