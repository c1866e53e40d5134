"""The check stage's export rule: a library exports exactly what the recipe names, where an entry may be a glob as a
version script's `global:` patterns are (a tree's own script may give its API as `*morphizen*`)."""

from __future__ import annotations

from toolkit.pipeline.adapters.check import export_mismatch


def test_names_must_be_exported_and_globs_cover_the_rest():
    declared = ("CreateEpFactories", "ReleaseEpFactory", "*morphizen*")
    found = ["CreateEpFactories", "ReleaseEpFactory", "_ZN9morphizen4PassE", "_ZTVN9morphizen7PatternE"]
    assert export_mismatch(found, declared) == ([], [])
    # An export no entry covers is unexpected; a named entry not exported is missing; a glob matching nothing is
    # neither (a version script's pattern may match no symbol of a given build).
    assert export_mismatch(["CreateEpFactories", "_ZN4llvm2cl3optE"], declared) == \
        (["_ZN4llvm2cl3optE"], ["ReleaseEpFactory"])
    assert export_mismatch(["a", "b"], ("a", "b")) == ([], [])


def test_gpu_targets_may_be_carried_by_one_library_each():
    """hip-ep's real runtime: custom_kernels_gfx942 and custom_kernels_gfx1100 carry one target each."""
    from toolkit.pipeline.adapters.check import uncarried_targets

    assert uncarried_targets(["gfx942", "gfx1100"], [["gfx942"], ["gfx1100"]]) == []
    assert uncarried_targets(["gfx942", "gfx1100"], [["gfx942", "gfx1100"]]) == []
    assert uncarried_targets(["gfx942", "gfx1100"], [["gfx942"]]) == ["gfx1100"]
