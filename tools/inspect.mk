# SPDX-License-Identifier: MIT
#
# Inspection tools (ccomctl, ccomd) and their tests, included by the
# top-level Makefile.  `make run` and the library do not need any of this:
# these targets need libnl-3, libnl-genl-3, json-c, libcurl and
# libmicrohttpd (tools/deps/packages.txt).
#   make ccomctl         $(BUILD)/bin/ccomctl
#   make ccomd           $(BUILD)/bin/ccomd
#   make check-inspect   build both and run selftests/inspect/run
#
# What both tools share (the printer, the member/job logic, the
# published-state reader, the driver+files communicator list, netlink and
# the HTTP client) is tools/lib/, built once into $(TOOLS_LIBA); ccomctl's
# own commands are tools/ccomctl/, ccomd's files daemon/.  Neither tool
# sees the other's headers, and both read the published-state format from
# libccom/include/ccom_pubstate.h, never from libccom's private headers.

# The test programs need libnl and json-c; both tools also libcurl's headers:
# tools/lib/http.c loads libcurl.so.4 with dlopen() at the first ccomd query
# instead of linking it, so that the ~30 libraries it pulls in do not slow
# every ccomctl start (0.58 s instead of 0.12 s per run in the TCG guest).
INSPECT_PKGS := libnl-genl-3.0 json-c
TOOLS_PKGS := $(INSPECT_PKGS) libcurl
CCOMD_PKGS := $(INSPECT_PKGS) libmicrohttpd
INSPECT_CFLAGS = $(CFLAGS_COMMON) $(CPPFLAGS_COMMON) -Itools/lib \
	$(shell pkg-config --cflags $(TOOLS_PKGS) 2>/dev/null)

TOOLS_LIB_SRCS := $(sort $(wildcard tools/lib/*.c))
TOOLS_LIB_OBJS := $(TOOLS_LIB_SRCS:%.c=$(BUILD)/%.o)
TOOLS_LIBA := $(BUILD)/lib/libccomtools.a
TOOLS_LIB_HDRS := $(wildcard tools/lib/*.h) libccom/include/ccom_pubstate.h \
	uapi/linux/nccom.h uapi/linux/nccom_genl.h

CCOMCTL_BIN := $(BUILD)/bin/ccomctl
CCOMD_BIN := $(BUILD)/bin/ccomd
CCOMCTL_SRCS := $(sort $(wildcard tools/ccomctl/*.c))
CCOMD_SRCS := $(sort $(wildcard daemon/*.c))
INSPECT_TEST_SRCS := $(sort $(wildcard selftests/inspect/*.c))
INSPECT_TEST_BINS := $(INSPECT_TEST_SRCS:selftests/inspect/%.c=$(BUILD)/selftests/inspect/%)

.PHONY: ccomctl ccomd inspect-tests check-inspect

ccomctl: $(CCOMCTL_BIN)
ccomd: $(CCOMD_BIN)

$(BUILD)/tools/lib/%.o: tools/lib/%.c $(TOOLS_LIB_HDRS)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(INSPECT_CFLAGS) -c $< -o $@

$(TOOLS_LIBA): $(TOOLS_LIB_OBJS)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $(TOOLS_LIB_OBJS)

$(CCOMCTL_BIN): $(CCOMCTL_SRCS) $(wildcard tools/ccomctl/*.h) $(TOOLS_LIB_HDRS) $(TOOLS_LIBA)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(INSPECT_CFLAGS) -Itools/ccomctl -o $@ $(CCOMCTL_SRCS) $(TOOLS_LIBA) \
		$(shell pkg-config --libs $(INSPECT_PKGS)) $(LDLIBS_COMMON)

$(CCOMD_BIN): $(CCOMD_SRCS) $(wildcard daemon/*.h) $(TOOLS_LIB_HDRS) $(TOOLS_LIBA)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(INSPECT_CFLAGS) -Idaemon $(shell pkg-config --cflags libmicrohttpd 2>/dev/null) \
		-o $@ $(CCOMD_SRCS) $(TOOLS_LIBA) \
		$(shell pkg-config --libs $(CCOMD_PKGS)) $(LDLIBS_COMMON)

inspect-tests: $(INSPECT_TEST_BINS)

# The test programs use libccom (and its publish API), not tools/lib.
$(BUILD)/selftests/inspect/%: selftests/inspect/%.c libccom/include/ccom_pubstate.h \
		uapi/linux/nccom.h uapi/linux/nccom_genl.h $(LIBA)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(INSPECT_CFLAGS) -o $@ $< $(LIBA) \
		$(shell pkg-config --libs $(INSPECT_PKGS)) $(LDLIBS_COMMON)

check-inspect: $(CCOMCTL_BIN) $(CCOMD_BIN) inspect-tests $(PERF_BIN)
	selftests/inspect/run $(BUILD)
