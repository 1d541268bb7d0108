"""Which backward pass is running, on which thread, and recording the script's threads."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any, Protocol


class BackwardPass(Protocol):
    """What the node hooks tell a running backward call (a `_backward.BackwardRecorder`)."""

    def leaf_before(self, nid: str, leaf: Any, grad_outputs: tuple = ()) -> None: ...

    def accumulated(self, leaf: Any) -> None: ...

    def node_ran(
        self, nid: str, name: str, leaf: Any, grad_inputs: tuple, grad_outputs: tuple
    ) -> None: ...


class RunningPasses:
    """The backward calls running now, per thread, innermost last: one runs inside another
    when a node's own backward makes a backward call (a reentrant checkpoint,
    `autograd.grad` inside a custom Function's backward)."""

    def __init__(self) -> None:
        self.running: dict[int, list[BackwardPass]] = {}  # empty when none runs
        self._main = threading.get_ident()

    def current(self) -> BackwardPass | None:
        """The backward call this thread is running, innermost first; on a thread the
        engine runs a device's nodes on, the call that started last."""
        stack = self.running.get(threading.get_ident())
        if stack:
            return stack[-1]
        for stack in reversed(list(self.running.values())):
            if stack:
                return stack[-1]
        return None

    def started(self, recorder: BackwardPass) -> int:
        """A backward call begins on this thread; its depth (0 unless inside another)."""
        stack = self.running.setdefault(threading.get_ident(), [])
        stack.append(recorder)
        return len(stack) - 1

    def ended(self) -> None:
        """The innermost backward call of this thread has returned (or raised)."""
        ident = threading.get_ident()
        stack = self.running.get(ident)
        if stack:
            stack.pop()
            if not stack:
                del self.running[ident]

    def on_main_thread(self) -> bool:
        """Whether the current thread is the one the script runs on."""
        return threading.get_ident() == self._main

    def thread_name(self) -> str | None:
        """The name of the current thread, if it is not the one the script runs on."""
        return None if self.on_main_thread() else threading.current_thread().name


class ThreadRecording:
    """While installed, a thread the script starts runs with `mode` on.

    `threading.setprofile` calls us in the new thread before its `run()` does anything.
    A plain Thread's target is wrapped there (the Thread object's own attribute; nothing
    in `threading` changes). A Thread subclass's own `run()` gets the mode when it is
    called and leaves it when it returns, with a profile function that watches that one
    frame meanwhile. Either way the mode is left before the thread ends: a thread must not
    end with it on its stack, because torch frees that stack after Python has let go of
    the thread.
    """

    def __init__(self, mode: Any, ended: Callable[[], bool]) -> None:
        self._mode = mode
        self._ended = ended
        self._previous: Any = None

    def install(self) -> None:
        self._previous = threading.getprofile()
        threading.setprofile(self._adopt)

    def remove(self) -> None:
        threading.setprofile(self._previous)

    def _adopt(self, frame: Any, event: str, arg: Any) -> None:
        thread = threading.current_thread()
        if self._ended():
            sys.setprofile(None)
            return
        mode = self._mode
        target = getattr(thread, "_target", None)
        if type(thread).run is threading.Thread.run:
            sys.setprofile(None)
            if target is None:
                return

            def recorded(*args: Any, **kwargs: Any) -> Any:
                with mode:
                    return target(*args, **kwargs)

            thread._target = recorded
            return
        if event != "call":  # not yet in run(): wait for it
            return
        run = frame
        mode.__enter__()

        def until_run_returns(frame: Any, event: str, arg: Any) -> None:
            if event == "return" and frame is run:
                sys.setprofile(None)
                mode.__exit__(None, None, None)

        sys.setprofile(until_run_returns)
