# SPDX-License-Identifier: MIT
"""What differs between the torch releases ccom_torch runs on (Debian 12's
1.13, Debian 13's 2.6), kept here so that backend.py reads the same on both.

- Registration: torch 2.x's ``Backend.register_backend`` takes ``devices``
  (without it 2.x warns and assumes "cpu" and "cuda"); 1.13's does not.
  Both take ``extended_api=True`` and then call the creator with a
  ``_DistributedBackendOptions`` (store, group rank and size, timeout,
  group id, global ranks) and the group's options.
- Group name and description: torch 2.x keeps them in the C++ backends
  registered on a ProcessGroup; a Python ProcessGroup has none, so
  ``pg.group_name`` raises "ProcessGroup name not set" (and with it
  ``destroy_process_group(pg)``) unless the subclass implements
  setGroupName/getGroupName (2.x's Python trampoline forwards them, and
  the description's pair likewise).  1.13 never calls them.
"""
import inspect

import torch.distributed as dist


def register_backend(name, creator_extended):
    """Register @creator_extended(dist_opts, pg_options) as backend @name
    for CPU tensors, through whichever signature this torch has."""
    reg = dist.Backend.register_backend
    kwargs = {"extended_api": True}
    if "devices" in inspect.signature(reg).parameters:
        kwargs["devices"] = ["cpu"]
    reg(name, creator_extended, **kwargs)


class ProcessGroup(dist.ProcessGroup):
    """dist.ProcessGroup with the group name and description kept in Python
    (torch 2.x asks the subclass for them)."""

    _ccom_group_name = ""
    _ccom_group_desc = ""

    def setGroupName(self, name):
        self._ccom_group_name = name

    def getGroupName(self):
        return self._ccom_group_name

    def setGroupDesc(self, desc):
        self._ccom_group_desc = desc

    def getGroupDesc(self):
        return self._ccom_group_desc
