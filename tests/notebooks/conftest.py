"""Shared notebook-test fixture: a private ``python3`` kernel spec running this interpreter."""

from __future__ import annotations

import sys

import pytest


@pytest.fixture(scope="session")
def kernel_spec_manager(tmp_path_factory):
    """A kernel spec directory holding one ``python3`` kernel that runs ``sys.executable -m ipykernel_launcher``."""
    from ipykernel.kernelspec import write_kernel_spec
    from jupyter_client.kernelspec import KernelSpecManager

    kernels = tmp_path_factory.mktemp("kernels")
    write_kernel_spec(path=kernels / "python3", overrides={"display_name": "Python 3 (forecast-reconcile tests)"})
    ksm = KernelSpecManager(kernel_dirs=[str(kernels)])
    assert ksm.get_kernel_spec("python3").argv[0] == sys.executable
    return ksm
