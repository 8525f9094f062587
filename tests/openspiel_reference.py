"""Independent reference values walked from OpenSpiel's own game trees (shared by several test files)."""
import pyspiel


def information_states(name: str) -> set[str]:
    """Every decision information-state string of the OpenSpiel game `name` (both players)."""
    out, stack = set(), [pyspiel.load_game(name).new_initial_state()]
    while stack:
        s = stack.pop()
        if s.is_terminal():
            continue
        if s.is_chance_node():
            stack += [s.child(a) for a, _ in s.chance_outcomes()]
            continue
        out.add(s.information_state_string())
        stack += [s.child(a) for a in s.legal_actions()]
    return out
