# SPDX-License-Identifier: MIT
#
# The torch.distributed backend (python/ccom_torch), included by the
# top-level Makefile.  Pure Python over libccom.so.1 (ctypes): nothing to
# build.  Its tests need Debian's python3-torch and run with Debian's
# interpreter, /usr/bin/python3 (an image may put another python3 first on
# PATH, one that does not see Debian's packages).
#   make check-torch     python/tests/torch_check.py on 2 and 4 processes
#   make check-torch-suite  torch's own distributed suite (_DistTestBase),
#                        gloo and ccom at 2 ranks: what passes on gloo must
#                        pass on ccom (or be in torch_suite_known.txt);
#                        about 4-5 minutes on 2 CPUs (in make check)
#   make check-torch-suite-full  the same at 2 and 3 ranks (about 10 minutes)
#   make check-torch-suite-ddp   the suite's DDP tests 10 times on ccom, 2 ranks
#   make install-python  the package into Debian's dist-packages

DEB_PYTHON ?= /usr/bin/python3
# Debian's python3 reads /usr/lib/python3/dist-packages (packages) and
# /usr/local/lib/python3/dist-packages (local installs).
PYTHON_SITE ?= $(PREFIX)/lib/python3/dist-packages
TORCH_PY := $(sort $(wildcard python/ccom_torch/*.py))

# The reviewed list of tests that may fail on ccom only (torch2.mk: torch 2.x's).
TORCH_SUITE_KNOWN ?= python/tests/torch_suite_known.txt
TORCH_SUITE = LD_LIBRARY_PATH=$(CURDIR)/$(BUILD)/lib $(DEB_PYTHON) python/tests/torch_suite.py \
	--known $(TORCH_SUITE_KNOWN)

.PHONY: check-torch check-torch-suite check-torch-suite-full check-torch-suite-ddp install-python

check-torch: lib
	@mkdir -p $(LOGS)
	LD_LIBRARY_PATH=$(CURDIR)/$(BUILD)/lib $(DEB_PYTHON) python/tests/torch_check.py 2>&1 | \
		tee $(LOGS)/torch.log; exit $${PIPESTATUS[0]}

check-torch-suite: lib
	@mkdir -p $(LOGS)
	$(TORCH_SUITE) --world 2 2>&1 | tee $(LOGS)/torch-suite.log; exit $${PIPESTATUS[0]}

check-torch-suite-full: lib
	@mkdir -p $(LOGS)
	$(TORCH_SUITE) --world 2 --world 3 2>&1 | tee $(LOGS)/torch-suite-full.log; \
		exit $${PIPESTATUS[0]}

check-torch-suite-ddp: lib
	@mkdir -p $(LOGS)
	$(TORCH_SUITE) --world 2 --repeat 10 --only 'DistributedDataParallel|ddp' \
		2>&1 | tee $(LOGS)/torch-suite-ddp.log; exit $${PIPESTATUS[0]}

install-python:
	install -d $(DESTDIR)$(PYTHON_SITE)/ccom_torch
	install -m 0644 $(TORCH_PY) $(DESTDIR)$(PYTHON_SITE)/ccom_torch/
