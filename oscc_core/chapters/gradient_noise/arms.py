"""The chapter's rows of arms: the four paper arms plus OSCC-Select's composite, their labels and claim keys."""
from __future__ import annotations

from oscc_core.engine.arms import PAPER_ARMS

SELECT = "oscc_select"
ROW_ARMS = PAPER_ARMS + (SELECT,)
LABELS = {"independent": "independent", "root_only": "root-only", "continuation_only": "continuation-only",
          "full": "CP-GRPO full", SELECT: "OSCC-Select"}
#: Claim-id keys of the paper's rows in tab:noise-transfer and tab:physical-cost-frontier.
PAPER_KEY = {"independent": "independent", "root_only": "root_only", "continuation_only": "continuation_only",
             "full": "cp_grpo_full", SELECT: "oscc_select"}
