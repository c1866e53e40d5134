"""The built-in CUDA-to-HIP converter: mapping tables as data, out-of-tree, incremental, strict.

Its entry point is hipify_tree() (tree.py), with a recipe's [hipify] settings, which toolkit/recipe/hipify.py reads.
"""

from toolkit.hipify.report import HipifyReport
from toolkit.hipify.tree import hipify_tree

__all__ = ["HipifyReport", "hipify_tree"]
