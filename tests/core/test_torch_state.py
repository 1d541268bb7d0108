"""Each way a script can leave torch's global settings changed, and that restore() undoes it
so the next program computes what `python FILE` would compute."""

from __future__ import annotations

import pytest
import torch
from torch._C import _len_torch_function_stack

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.kernel.torch_state import TorchDefaults, default_device_set

LAB = """import torch
w = torch.tensor(3.0, requires_grad=True)
x = torch.tensor(2.0)
b = torch.tensor(1.0, requires_grad=True)
loss = (w * x + b - 5) ** 2
loss.backward()
"""


def _state() -> dict:
    return {
        "grad": torch.is_grad_enabled(),
        "inference": torch.is_inference_mode_enabled(),
        "device": default_device_set(),
        "factory device": torch.ones(1).device,
        "modes": _len_torch_function_stack(),
        "dtype": torch.get_default_dtype(),
        "anomaly": torch.is_anomaly_enabled(),
    }


@pytest.fixture
def defaults():
    before = TorchDefaults.now()
    clean = _state()
    yield before
    before.restore()  # whatever a failing test left
    assert _state() == clean


# (what the script leaves behind, what restore() says it put back)
LEAKS = {
    "torch.set_grad_enabled(False)": ["grad mode"],
    "torch.no_grad().__enter__()": ["grad mode"],
    "ctx = torch.inference_mode()\nctx.__enter__()": ["inference mode"],
    "torch.set_default_device('meta')": ["default device"],
    "torch.device('meta').__enter__()": ["torch function modes"],
    "torch.set_default_device('meta')\ntorch.device('meta').__enter__()": [
        "default device",
        "torch function modes",
    ],
    "torch.set_default_dtype(torch.float64)": ["default dtype"],
    "torch.autograd.set_detect_anomaly(True)": ["anomaly detection"],
    "torch.autograd.set_detect_anomaly(True, check_nan=False)": ["anomaly detection"],
}


@pytest.mark.parametrize("leak", list(LEAKS))
def test_what_a_script_leaves_is_put_back(defaults, leak) -> None:
    clean = _state()
    namespace = {"__name__": "__main__"}
    left = run_source("import torch\n" + leak + "\n", namespace=namespace)
    assert left.errors == []
    assert _state() != clean  # it did leak: the next program would have inherited it
    assert defaults.restore() == LEAKS[leak]
    assert _state() == clean
    # The next program (in the same namespace: the guard the script holds is still alive)
    # gets torch's gradients on the CPU in float32, as under `python FILE`.
    trace = run_source(LAB, namespace=namespace)
    w = trace.tensor_named("w")
    assert trace.errors == [] and w.grad.data == 8.0
    assert (w.device, w.dtype) == ("cpu", "float32")
    assert trace.tensor_named("b").grad.data == 4.0


def test_anomaly_mode_left_by_a_context_manager(defaults) -> None:
    with pytest.warns(UserWarning, match="Anomaly Detection"):  # torch says so on entry
        run_source("import torch\ntorch.autograd.detect_anomaly().__enter__()\n")
    assert torch.is_anomaly_enabled()
    assert defaults.restore() == ["anomaly detection"]
    assert not torch.is_anomaly_enabled()


def test_a_kept_inference_mode_closed_later_changes_nothing(defaults) -> None:
    # The script enters inference mode in one run and leaves it in the next (REPL style):
    # the state after both is the clean one.
    namespace = {"__name__": "__main__"}
    run_source("import torch\nctx = torch.inference_mode()\nctx.__enter__()\n", namespace=namespace)
    assert defaults.restore() == ["inference mode"]
    run_source("ctx.__exit__(None, None, None)\n", namespace=namespace)
    assert not torch.is_inference_mode_enabled() and torch.is_grad_enabled()
    assert defaults.restore() == []


def test_the_rng_is_left_alone(defaults) -> None:
    run_source("import torch\ntorch.manual_seed(7)\n")
    defaults.restore()
    expected = torch.Generator().manual_seed(7)
    assert torch.equal(torch.rand(3), torch.rand(3, generator=expected))


def test_nothing_changed_means_nothing_done(defaults) -> None:
    run_source(LAB)
    assert defaults.restore() == []


def test_a_run_on_a_chosen_device_sets_no_default_device_after(defaults) -> None:
    # The device picker's device is torch's default only while the run lasts; after it,
    # none is set (setting "cpu" instead would route every later torch call through a mode).
    trace = run_source("import torch\nx = torch.ones(2)\n", device="meta")
    assert trace.tensor_named("x").device == "meta"
    assert default_device_set() is None and _len_torch_function_stack() == 0
