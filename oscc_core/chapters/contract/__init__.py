"""Chapter 01, the coupling contract: does the engine satisfy C1-C5, and does the certificate catch each break?

It tabulates the random-stream contract (`stream_table`), audits every
information state against every consistent full state (`observation`),
replays traced collections group by group into one failure code each
(`run_audit`), turns a run audit into the safety decision (`predicates`),
runs the replay checks per seed (`implementation_checks`), the branch and
seat swaps (`swaps`), the controlled violations and admissible arms
(`violation_controls`) and one injected fault per failure code
(`failure_ledger`), and builds the paper-beside-reproduction rows and the
settings of the paper's audit (`rows`), the chapter's findings (`findings`),
tables, figure and results payload the notebook shows.  Counts are of
information states, groups, lanes, transitions and stream events; returns
and shifts are in chips, contrast variances in chips squared, variance
changes in percent.
"""
