"""Deprecated path of the Lemma 4.1 certificate: import it from :mod:`odtkit.pruning`.

The certificate moved into the pruning package (issue 38) with the formulations it certifies;
``odtkit.pruning.certify_network_matrix`` ... is its one public path. This module re-exports it
with a FutureWarning and goes in a later release.
"""

from odtkit._warnings import warn
from odtkit.pruning import NetworkCertificate, certify_network_matrix, is_totally_unimodular

__all__ = ["NetworkCertificate", "certify_network_matrix", "is_totally_unimodular"]

warn(
    "odtkit.formulations.network is deprecated and will be removed: import the certificate "
    "from odtkit.pruning (from odtkit.pruning import certify_network_matrix)",
    FutureWarning,
)
