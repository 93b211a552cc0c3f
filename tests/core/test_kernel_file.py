"""run_kernel_file: a reader's kernel file built and run on numpy arrays,
with the compiler's log on a build failure and guards after every buffer
(tests/core/kernel_files/*.cl hold the kernels)."""

import pathlib

import numpy as np
import pytest

from netcl_lite.core.device import device_of
from netcl_lite.core.kernel_file import (BufferOverrun, KernelBuildError,
                                         run_kernel_file)

FILES = pathlib.Path(__file__).with_name("kernel_files")
SCALE = FILES / "scale.cl"


def args(n=5, c=2.0):
    x = np.arange(n, dtype=np.float64) + 1.0
    return dict(x=x, ids=np.zeros(n, dtype=np.int64), y=np.zeros(n), c=c, n=n)


def guarded(queue):
    return not device_of(queue).simulator


def test_runs_and_returns_every_buffer_by_name(queue):
    ran = run_kernel_file(SCALE, "scale", (5,), args(), queue=queue)
    np.testing.assert_array_equal(ran["y"], [2, 4, 6, 8, 10])
    np.testing.assert_array_equal(ran["x"], [1, 2, 3, 4, 5])   # unchanged
    assert ran["y"].dtype == np.float32 and ran["ids"].dtype == np.int32
    assert ran.seconds is None and set(ran.buffers) == {"x", "ids", "y"}


def test_shapes_come_back_as_passed(queue):
    a = args(6)
    a.update(x=a["x"].reshape(2, 3), y=np.zeros((2, 3)))
    ran = run_kernel_file(SCALE, "scale", (6,), a, local_size=(4,), queue=queue)
    assert ran["y"].shape == (2, 3)
    np.testing.assert_array_equal(ran["y"], 2 * a["x"])


def test_repeat_times_the_kernel(queue):
    ran = run_kernel_file(SCALE, "scale", (5,), args(), queue=queue, repeat=3)
    assert 0 < ran.seconds < 1


def test_a_build_failure_shows_the_log_at_the_line(queue):
    with pytest.raises(KernelBuildError) as err:
        run_kernel_file(FILES / "does_not_compile.cl", "scale", (5,), args(),
                        queue=queue)
    text = str(err.value)
    assert "does_not_compile.cl does not compile" in text
    assert "does_not_compile.cl:6:" in text          # the file's name, its line
    assert "    float v = c * x[i]" in text          # and the line itself
    assert "tempfile" not in text


INCLUDER = """#include "part.cl"

__kernel void f(__global float *y, const int n) {
    int i = get_global_id(0);
    if (i < n) y[i] = twice(y[i])EXTRA;
}
"""


def test_an_included_file_is_found_beside_and_lines_keep_their_numbers(
        queue, tmp_path):
    """``#include "part.cl"`` takes part.cl from the file's folder (the
    library's own kernel files include their shared parts this way); an
    error after it is still located at its line of the file."""
    (tmp_path / "part.cl").write_text(
        "inline float twice(float x) {\n    return 2.0f * x;\n}\n")
    (tmp_path / "k.cl").write_text(INCLUDER.replace("EXTRA", ""))
    ran = run_kernel_file(tmp_path / "k.cl", "f", (4,), dict(y=np.ones(4), n=4),
                          queue=queue)
    np.testing.assert_array_equal(ran["y"], 2.0)
    (tmp_path / "k.cl").write_text(INCLUDER.replace("EXTRA", " + oops"))
    with pytest.raises(KernelBuildError, match=r"k.cl:5:\d+: .*'oops'"):
        run_kernel_file(tmp_path / "k.cl", "f", (4,), dict(y=np.ones(4), n=4),
                        queue=queue)


def test_a_write_past_the_end_is_caught(queue):
    if not guarded(queue):
        pytest.skip("Oclgrind reports the access itself")
    with pytest.raises(BufferOverrun, match=r"wrote 59 values past the end of "
                       r"'y', which holds 5.*rounded up to \(64,\)"):
        run_kernel_file(SCALE, "scale_unguarded", (5,), args(), queue=queue)


def test_a_read_past_the_end_gives_nan(queue):
    if not guarded(queue):
        pytest.skip("Oclgrind reports the access itself")
    ran = run_kernel_file(SCALE, "scale_shifted", (5,), args(), queue=queue)
    np.testing.assert_array_equal(ran["y"][:4], [4, 6, 8, 10])
    assert np.isnan(ran["y"][4])


def test_a_guard_value_copied_into_another_guard_is_caught(queue):
    """Each buffer's guard NaNs carry a payload of their own."""
    if not guarded(queue):
        pytest.skip("Oclgrind reports the access itself")
    with pytest.raises(BufferOverrun, match="1 values past the end of 'y'"):
        run_kernel_file(SCALE, "copy_past_end", (5,), args(), queue=queue)


@pytest.mark.parametrize("change, message", [
    (dict(n=5.0), "argument 5 'n' is an int, got float 5.0"),
    (dict(c=2), "argument 4 'c' is a float, got int 2"),
    (dict(ids=np.zeros(5)), "'ids' is a __global int buffer: pass a non-empty "
                            "array of integers, got float64"),
    (dict(x=np.zeros(0)), "'x' is a __global float buffer"),
    (dict(z=1), r"missing \[\], unknown \['z'\]"),
])
def test_bad_arguments_are_named_before_anything_builds(queue, change, message):
    """The file does not compile: a ValueError shows nothing was built."""
    a = args()
    a.update(change)
    with pytest.raises(ValueError, match=message):
        run_kernel_file(FILES / "does_not_compile.cl", "scale", (5,), a,
                        queue=queue)


def test_a_missing_argument_or_kernel_is_named(queue):
    a = args()
    del a["c"]
    with pytest.raises(ValueError, match=r"missing \['c'\]"):
        run_kernel_file(SCALE, "scale", (5,), a, queue=queue)
    with pytest.raises(ValueError, match=r"has no __kernel void softmax.*"
                                         r"'scale', 'scale_shifted'"):
        run_kernel_file(SCALE, "softmax", (5,), args(), queue=queue)
    with pytest.raises(ValueError, match="no file"):
        run_kernel_file(FILES / "absent.cl", "scale", (5,), args(), queue=queue)
    with pytest.raises(ValueError, match="must be positive, of one length"):
        run_kernel_file(SCALE, "scale", (5, 1), args(), local_size=(4,),
                        queue=queue)
