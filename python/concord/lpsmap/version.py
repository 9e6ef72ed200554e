"""The version of lp-sparsemap's API that concord.lpsmap reproduces."""

__version__ = "1.1.dev0"
