# SPDX-License-Identifier: MIT
#
# Inspection tools (ccomctl, ccomd) and their tests, included by the
# top-level Makefile.  `make run` and the library do not need any of this:
# these targets need libnl-3, libnl-genl-3, json-c and libmicrohttpd
# (tools/deps/packages.txt).
#   make ccomctl         $(BUILD)/bin/ccomctl
#   make ccomd           $(BUILD)/bin/ccomd
#   make check-inspect   build both and run selftests/inspect/run

INSPECT_PKGS := libnl-genl-3.0 json-c
CCOMD_PKGS := $(INSPECT_PKGS) libmicrohttpd
INSPECT_CFLAGS = $(CFLAGS_COMMON) $(CPPFLAGS_COMMON) -Itools/ccomctl -Idaemon \
	$(shell pkg-config --cflags $(CCOMD_PKGS) 2>/dev/null)

CCOMCTL_BIN := $(BUILD)/bin/ccomctl
CCOMD_BIN := $(BUILD)/bin/ccomd
CCOMCTL_SRCS := $(sort $(wildcard tools/ccomctl/*.c))
# ccomd shares the printer, the member/job logic, the published-state reader,
# the driver+files communicator list and the HTTP client with ccomctl.
CCOMD_SHARED := $(addprefix tools/ccomctl/,print.c member.c pubdir.c http.c jobcore.c nl.c \
	commlist.c)
CCOMD_SRCS := $(sort $(wildcard daemon/*.c)) $(CCOMD_SHARED)
INSPECT_HDRS := $(wildcard tools/ccomctl/*.h daemon/*.h) libccom/publish/pubfile.h \
	uapi/linux/nccom_genl.h
INSPECT_TEST_SRCS := $(sort $(wildcard selftests/inspect/*.c))
INSPECT_TEST_BINS := $(INSPECT_TEST_SRCS:selftests/inspect/%.c=$(BUILD)/selftests/inspect/%)

.PHONY: ccomctl ccomd inspect-tests check-inspect

ccomctl: $(CCOMCTL_BIN)
ccomd: $(CCOMD_BIN)

$(CCOMCTL_BIN): $(CCOMCTL_SRCS) $(INSPECT_HDRS)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(INSPECT_CFLAGS) -o $@ $(CCOMCTL_SRCS) \
		$(shell pkg-config --libs $(INSPECT_PKGS)) $(LDLIBS_COMMON)

$(CCOMD_BIN): $(CCOMD_SRCS) $(INSPECT_HDRS)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(INSPECT_CFLAGS) -o $@ $(CCOMD_SRCS) \
		$(shell pkg-config --libs $(CCOMD_PKGS)) $(LDLIBS_COMMON)

inspect-tests: $(INSPECT_TEST_BINS)

$(BUILD)/selftests/inspect/%: selftests/inspect/%.c $(INSPECT_HDRS) $(LIBA)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(INSPECT_CFLAGS) -o $@ $< $(LIBA) \
		$(shell pkg-config --libs $(INSPECT_PKGS)) $(LDLIBS_COMMON)

check-inspect: $(CCOMCTL_BIN) $(CCOMD_BIN) inspect-tests $(PERF_BIN)
	selftests/inspect/run $(BUILD)
