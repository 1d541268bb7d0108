"""The kernel protocol's own rules: what may be called, and which replies may be read."""

from __future__ import annotations

import os

import pytest

import autograd_viz
from autograd_viz.core.kernel import protocol
from autograd_viz.core.kernel.protocol import (
    PROTOCOL_VERSION,
    call_request,
    call_target,
    version_problem,
    versions,
)
from autograd_viz.core.kernel.trace_messages import trace_payload
from autograd_viz.core.learning.lab import lab_step
from autograd_viz.core.trace import TRACE_VERSION, Trace


def test_a_call_names_a_core_function_by_module_and_qualname() -> None:
    assert call_target(lab_step) == "autograd_viz.core.learning.lab:lab_step"
    assert (
        call_target(protocol.namespace_summary)
        == "autograd_viz.core.kernel.protocol:namespace_summary"
    )
    assert "autograd_viz.core.learning.lab:lab_step" in call_request(
        call_target(lab_step), {"code": "1"}
    )


@pytest.mark.parametrize(
    "function",
    [os.system, print, lambda namespace: None, "autograd_viz.core.learning.lab:lab_step", 3],
    ids=["os.system", "builtin", "lambda", "a string", "not callable"],
)
def test_anything_else_is_refused_in_the_app(function) -> None:
    with pytest.raises(ValueError, match="not a callable core function"):
        call_target(function)


def test_the_kernel_resolves_only_core_functions() -> None:
    assert protocol._resolve("autograd_viz.core.learning.lab:lab_step") is lab_step
    for target in ("os:system", "autograd_viz.cli:main", "autograd_viz.core.learning.lab"):
        with pytest.raises(ValueError):
            protocol._resolve(target)


def test_replies_carry_the_versions() -> None:
    payload, _ = trace_payload(Trace())
    assert payload["protocol"] == PROTOCOL_VERSION
    assert payload["trace_version"] == TRACE_VERSION
    assert payload["autograd_viz"] == autograd_viz.__version__
    assert version_problem(payload) is None


def test_a_reply_of_another_version_names_both_and_what_to_do() -> None:
    ours = versions()
    theirs = {**ours, "protocol": PROTOCOL_VERSION + 1, "autograd_viz": "9.9.9"}
    message = version_problem(theirs)
    assert message is not None
    assert "autograd-viz 9.9.9" in message and f"kernel protocol {PROTOCOL_VERSION + 1}" in message
    assert f"autograd-viz {ours['autograd_viz']}" in message
    assert f"pip install autograd-viz=={ours['autograd_viz']}" in message
    assert "Use a local kernel" in message
    other_trace = version_problem({**ours, "trace_version": TRACE_VERSION - 1})
    assert other_trace is not None and f"trace format {TRACE_VERSION - 1}" in other_trace
    # A kernel from before versions were sent (protocol 1) says less, and is refused too.
    old = version_problem({"protocol": 1})
    assert old is not None and "another autograd-viz" in old and "trace format unknown" in old
