"""The paper's estimators, independent of any chapter: statistics, policy-gradient geometry, selectors."""
