"""argus.py — mark training steps and phases for Argus from Python (ctypes, no build).

    import argus
    argus.set_total_steps(num_iterations)   # optional: the report's time-to-train forecast
    for it, batch in enumerate(loader):
        with argus.step(it):
            with argus.phase("forward"):
                loss = model(batch)
            with argus.phase("backward"):
                loss.backward()
            with argus.phase("optimizer"):
                opt.step()

Finds libargus.so through ARGUS_LIB, then the already-loaded library (argus-run or the
SPANK plugin preloads it), then the loader path. When Argus is absent or off every call is
a cheap no-op: the training script never fails because of Argus. Timestamps are taken by
libargus (CLOCK_REALTIME, the CUPTI timebase on Linux).
"""
import contextlib
import ctypes
import ctypes.util
import os

__all__ = ["active", "step", "phase", "step_begin", "step_end", "phase_push", "phase_pop",
           "set_total_steps"]


def _load():
    names = [os.environ.get("ARGUS_LIB"), "libargus.so.0", "libargus.so",
             ctypes.util.find_library("argus")]
    for name in names:
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        try:
            lib.argus_step_begin.argtypes = [ctypes.c_uint64, ctypes.c_uint64]
            lib.argus_step_end.argtypes = [ctypes.c_uint64, ctypes.c_uint64]
            lib.argus_phase_push.argtypes = [ctypes.c_char_p, ctypes.c_uint64]
            lib.argus_phase_pop.argtypes = [ctypes.c_uint64]
            lib.argus_active.restype = ctypes.c_int
        except AttributeError:
            continue
        return lib
    return None


_lib = _load()


def active():
    """True when Argus collects in this process."""
    return bool(_lib and _lib.argus_active())


def set_total_steps(n):
    """The job's planned steps, for the time-to-train forecast (0: unknown); on any rank:
    the value reaches rank 0's reports in-band (argus.h, argus_set_total_steps)."""
    f = getattr(_lib, "argus_set_total_steps", None) if _lib else None
    if f:
        f.argtypes = [ctypes.c_uint64]
        f(int(n))


def step_begin(n):
    if _lib:
        _lib.argus_step_begin(int(n), 0)


def step_end(n):
    if _lib:
        _lib.argus_step_end(int(n), 0)


def phase_push(name):
    if _lib:
        _lib.argus_phase_push(str(name).encode("utf-8", "replace"), 0)


def phase_pop():
    if _lib:
        _lib.argus_phase_pop(0)


@contextlib.contextmanager
def step(n):
    """One training step; n must increase from step to step."""
    step_begin(n)
    try:
        yield
    finally:
        step_end(n)


@contextlib.contextmanager
def phase(name):
    """A phase range: forward, backward, optimizer, data loading, or any name."""
    phase_push(name)
    try:
        yield
    finally:
        phase_pop()
