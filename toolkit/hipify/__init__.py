"""The built-in CUDA-to-HIP converter: mapping tables as data, out-of-tree, incremental, strict.

Public API for the pipeline: HipifySettings / from_table (recipe [hipify]) and hipify_tree().
"""

from toolkit.hipify.report import HipifyReport
from toolkit.hipify.tree import hipify_tree
from toolkit.recipe.hipify import HipifySettings, from_table

__all__ = ["HipifyReport", "HipifySettings", "from_table", "hipify_tree"]
