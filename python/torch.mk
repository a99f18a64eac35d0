# SPDX-License-Identifier: MIT
#
# The torch.distributed backend (python/ccom_torch), included by the
# top-level Makefile.  Pure Python over libccom.so.1 (ctypes): nothing to
# build.  Its tests need Debian's python3-torch and run with Debian's
# interpreter, /usr/bin/python3 (an image may put another python3 first on
# PATH, one that does not see Debian's packages).
#   make check-torch     python/tests/torch_check.py on 2 and 4 processes
#   make install-python  the package into Debian's dist-packages

DEB_PYTHON ?= /usr/bin/python3
# Debian's python3 reads /usr/lib/python3/dist-packages (packages) and
# /usr/local/lib/python3/dist-packages (local installs).
PYTHON_SITE ?= $(PREFIX)/lib/python3/dist-packages
TORCH_PY := $(sort $(wildcard python/ccom_torch/*.py))

.PHONY: check-torch install-python

check-torch: lib
	@mkdir -p $(LOGS)
	LD_LIBRARY_PATH=$(CURDIR)/$(BUILD)/lib $(DEB_PYTHON) python/tests/torch_check.py 2>&1 | \
		tee $(LOGS)/torch.log; exit $${PIPESTATUS[0]}

install-python:
	install -d $(DESTDIR)$(PYTHON_SITE)/ccom_torch
	install -m 0644 $(TORCH_PY) $(DESTDIR)$(PYTHON_SITE)/ccom_torch/
