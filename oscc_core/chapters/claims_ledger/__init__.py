"""Chapter 07, the claims ledger: every entry of the paper's claims file once, with the verdict a chapter gave it.

Built from the results files of the other chapters only (`collect`), one row per claim entry (`ledger`),
shown as tables and figures (`tables`, `figures`), beside the paper's internal disagreements
(`disagreements`).  Nothing is recomputed.
"""
