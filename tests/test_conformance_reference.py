"""The conformance suite run on the reference backend itself (and on the
compiled template backend when it is installed), proving the suite works."""

from mnn_core.testing import BackendConformance


class TestReferenceConformance(BackendConformance):
    backend = "reference"
