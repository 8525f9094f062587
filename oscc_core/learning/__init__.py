"""Update rules and learners: the clipped surrogate update (`surrogate`)."""
