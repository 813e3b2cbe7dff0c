"""tools/mutate.py's planted bugs still apply to the tree: each patch's text occurs exactly once in its
file (code that moved would make the mutation check report an error instead of a verdict), and the patch
changes it. The check itself (minutes: it rebuilds the x86 extension) runs by hand: python tools/mutate.py."""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _mutate():
    spec = importlib.util.spec_from_file_location("mutate", os.path.join(ROOT, "tools", "mutate.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("mutate", module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


MUTANTS = _mutate().MUTANTS


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_patch_applies_once(mutant):
    with open(os.path.join(ROOT, mutant.path), encoding="utf-8") as f:
        text = f.read()
    assert text.count(mutant.old) == 1, f"{mutant.name}: {mutant.path} holds {text.count(mutant.old)} copies"
    assert mutant.new != mutant.old and mutant.groups


def test_every_mutant_names_existing_tests():
    for m in MUTANTS:
        for label, args in m.groups.items():
            paths = [a for a in args if a.endswith(".py")]
            assert paths, f"{m.name} {label}: no test file"
            missing = [p for p in paths if not os.path.isfile(os.path.join(ROOT, p))]
            assert not missing, f"{m.name} {label}: {missing} do not exist"
