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


def deal_values(name: str, probs_of) -> dict[tuple[int, int], float]:
    """Per ordered private-card deal (P0 card, P1 card): E[u_0] when the acting player plays
    probs_of(player, information state string, legal actions) -> {action: probability}, by a walk over the
    OpenSpiel game `name` (the public card by its chance outcomes)."""
    game = pyspiel.load_game(name)
    cards = game.new_initial_state().chance_outcomes()
    out = {}
    for c0, _ in cards:
        for c1, _ in cards:
            if c0 == c1:
                continue
            state = game.new_initial_state()
            state.apply_action(c0)
            state.apply_action(c1)
            stack, value = [(state, 1.0)], 0.0
            while stack:
                s, p = stack.pop()
                if s.is_terminal():
                    value += p * s.returns()[0]
                elif s.is_chance_node():
                    stack.extend((s.child(a), p * q) for a, q in s.chance_outcomes())
                else:
                    row = probs_of(s.current_player(), s.information_state_string(), s.legal_actions())
                    stack.extend((s.child(a), p * row[a]) for a in s.legal_actions())
            out[(c0, c1)] = value
    return out
