# SPDX-License-Identifier: MIT
"""The one piece of the expecttest module that torch's test harness needs.

torch.testing._internal.common_utils imports expecttest (not packaged in
Debian 12) for its TestCase base class and the ACCEPT flag, which only
assertExpectedInline uses; the distributed suite never calls that.  This
is written here, not copied: a plain unittest.TestCase and ACCEPT = False.
torch_suite.py puts this directory on sys.path only when the real module
is missing.
"""
import unittest

ACCEPT = False


class TestCase(unittest.TestCase):
    """unittest.TestCase; expecttest's inline-expectation helpers are absent."""
