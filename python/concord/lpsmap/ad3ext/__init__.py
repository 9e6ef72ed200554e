"""lp-sparsemap's structured factors: a sequence without start and stop
scores, and dependency trees over a square layout."""
