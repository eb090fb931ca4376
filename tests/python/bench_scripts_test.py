"""The GPU-machine scripts of the integrations (python/bench/trainer_h200.py, generate_h200.py,
lightning_h200.py) where their frameworks are missing: exit status 2 at once, naming what is missing,
before any work. Where torch is installed the test does not apply (the scripts then run for real)."""
import importlib.util
import os
import subprocess
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python", "bench")


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="torch is installed: the scripts would run")
@pytest.mark.parametrize("script, needs", [("trainer_h200.py", "torch, transformers"),
                                           ("generate_h200.py", "torch, transformers"),
                                           ("lightning_h200.py", "torch")])
def test_a_missing_framework_fails_fast_and_says_which(script, needs):
    out = subprocess.run([sys.executable, os.path.join(BENCH, script)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.startswith(f"{script}: needs {needs}; missing: torch (")
    assert out.stdout == ""


@pytest.mark.parametrize("script", ["trainer_h200.py", "generate_h200.py", "lightning_h200.py"])
def test_usage_is_printed_without_the_frameworks(script):
    out = subprocess.run([sys.executable, os.path.join(BENCH, script), "--help"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and "--device" in out.stdout
    bad = subprocess.run([sys.executable, os.path.join(BENCH, script), "--no-such-option"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and "--no-such-option" in bad.stderr
