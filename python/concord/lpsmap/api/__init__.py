"""lp-sparsemap's high-level API: variables, factor descriptions, graphs."""
