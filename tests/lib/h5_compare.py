"""Two HDF5 files compared member by member (h5py): what a test needs to
say "this output equals that one" without trusting any of our readers."""

import h5py
import numpy as np


def differences(a_path, b_path):
    """Every group, dataset (values, dtype, shape) and attribute of the two
    files compared; the differences found, as lines naming the member
    (empty when the files hold the same content)."""
    found = []

    def walk(a, b, where):
        if sorted(a.keys()) != sorted(b.keys()):
            found.append(f"{where}: members {sorted(a.keys())} vs {sorted(b.keys())}")
            return
        if sorted(a.attrs.keys()) != sorted(b.attrs.keys()):
            found.append(f"{where}: attributes differ")
        for k in a.attrs:
            if not np.array_equal(np.asarray(a.attrs[k]), np.asarray(b.attrs[k])):
                found.append(f"{where}: attribute {k}")
        for k in a:
            if isinstance(a[k], h5py.Group):
                walk(a[k], b[k], f"{where}/{k}")
                continue
            x, y = a[k][()], b[k][()]
            if x.dtype != y.dtype or np.shape(x) != np.shape(y) or not np.array_equal(x, y):
                found.append(f"{where}/{k}: values differ")

    with h5py.File(a_path, "r") as a, h5py.File(b_path, "r") as b:
        walk(a, b, "")
    return found
