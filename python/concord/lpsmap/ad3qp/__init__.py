"""lp-sparsemap's low-level API (its AD3 with QP extensions): concord.ad3's
PFactorGraph and variables, which carry lp-sparsemap's additions."""
