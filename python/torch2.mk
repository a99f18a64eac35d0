# SPDX-License-Identifier: MIT
#
# The torch backend on torch 2.6, Debian 13's python3-torch, from a
# Debian 12 host: tools/torch2/root builds a trixie root with mmdebstrap
# once (cached outside the tree, in /var/cache/ccom/torch2, so clean
# checkouts reuse it; CCOM_TORCH2_CACHE moves it) and tools/torch2/run runs
# a command in it under chroot with this tree bound at its own path.
# Needs root.  Included by the top-level Makefile.
#   make torch2-root    build the root if missing and print its path
#   make check-torch2   libccom built by the root's gcc into $(BUILD)/torch2,
#                       then `make check-torch` (python/tests/torch_check.py)
#                       with the root's python3 and torch 2.6
#   make check-torch2-suite  torch 2.6's own _DistTestBase, gloo and ccom at
#                       2 ranks (python/tests/torch_suite.py): what passes on
#                       gloo must pass on ccom or be in torch_suite_known2.txt;
#                       2.4 minutes on 2 CPUs at load 1-2, so make check runs it
#
# USE_LIBUV=0: Debian's torch 2.6 is built without libuv, and TCPStore
# (tcp:// and env:// rendezvous) asks for it unless told not to; users of
# that package need the same setting (python/README.md).

TORCH2_BUILD := $(BUILD)/torch2

.PHONY: torch2-root check-torch2 check-torch2-suite

torch2-root:
	tools/torch2/root

check-torch2:
	@mkdir -p $(LOGS)
	tools/torch2/run env USE_LIBUV=0 make -s BUILD=$(TORCH2_BUILD) LOGS=$(TORCH2_BUILD)/check-logs \
		check-torch 2>&1 | tee $(LOGS)/torch2.log; exit $${PIPESTATUS[0]}

check-torch2-suite:
	@mkdir -p $(LOGS)
	tools/torch2/run env USE_LIBUV=0 make -s BUILD=$(TORCH2_BUILD) LOGS=$(TORCH2_BUILD)/check-logs \
		TORCH_SUITE_KNOWN=python/tests/torch_suite_known2.txt check-torch-suite 2>&1 | \
		tee $(LOGS)/torch2-suite.log; exit $${PIPESTATUS[0]}
