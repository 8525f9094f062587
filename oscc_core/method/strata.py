"""Card strata: the own-card classes of Leduc (rank = card id // 2) that the selector certifies separately."""
from __future__ import annotations

CARD_CLASSES = ("J", "Q", "K")      # Leduc ranks, card ids 0-1, 2-3, 4-5


def card_class(own_card: int) -> int:
    """The stratum index (0 J, 1 Q, 2 K) of a Leduc card id."""
    return int(own_card) // 2


def stratum_of(own_card: int) -> str:
    """The stratum name ("J", "Q" or "K") of a Leduc card id."""
    return CARD_CLASSES[card_class(own_card)]
