"""One package per paper section: what its notebook computes, its tables and figures."""
