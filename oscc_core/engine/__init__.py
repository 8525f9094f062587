"""How coupled comparison groups are drawn: counter-based streams, arms, roots, rollouts and the collector."""
