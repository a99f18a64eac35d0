# SPDX-License-Identifier: MIT
#
# ccom top-level Makefile.
#   make run         build ccom-perf (gcc + make only) and run the main job
#   make check       install what is missing (as root), build everything, run
#                    the library tests, their ASan/UBSan run and the driver
#                    selftests in a VM on Debian's 6.1 and 6.12 kernels
#   make             libccom (shared + static), the userspace tools and, when
#                    KDIR has kernel headers, nccom.ko
#   make kmod        nccom.ko against KDIR (default: the running kernel)
#
# Userspace objects go to $(BUILD); the library sources are picked up by
# wildcard, so adding a file in libccom/<layer>/ needs no edit here.

BUILD ?= build
CC ?= gcc
# Recipes use PIPESTATUS to keep a command's status through `| tee`.
SHELL := /bin/bash
LOGS = $(BUILD)/check-logs
KDIR ?= /lib/modules/$(shell uname -r)/build
V ?= 0
Q := $(if $(filter 1,$(V)),,@)

# SAN=1 builds with AddressSanitizer + UndefinedBehaviorSanitizer.
SAN ?= 0
comma := ,
SANFLAGS := $(if $(filter 1,$(SAN)),-fsanitize=address$(comma)undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined,)
OPT ?= -O2

LIB_SRCS := $(sort $(wildcard libccom/*/*.c libccom/*/*/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
LIB_HASH := $(shell cat $(LIB_SRCS) libccom/include/ccom.h 2>/dev/null | cksum | cut -d' ' -f1)

CPPFLAGS_COMMON := -Ilibccom/include -Ilibccom -Iuapi -D_GNU_SOURCE
CFLAGS_COMMON := -std=gnu11 -Wall -Wextra -Werror -g $(OPT) -pthread $(SANFLAGS)
LIB_CFLAGS := $(CFLAGS_COMMON) $(CPPFLAGS_COMMON) -fPIC \
	-DCCOM_BUILD_HASH=$(LIB_HASH)ULL -DCCOM_BUILDING_LIB
LDLIBS_COMMON := -pthread -lm $(SANFLAGS)

LIBSO := $(BUILD)/lib/libccom.so.1
LIBA := $(BUILD)/lib/libccom.a

PERF_SRCS := $(sort $(wildcard tools/ccom-perf/*.c))
PERF_BIN := $(BUILD)/bin/ccom-perf

TEST_SRCS := $(sort $(wildcard selftests/libccom/*.c))
TEST_BINS := $(TEST_SRCS:selftests/libccom/%.c=$(BUILD)/selftests/libccom/%)

.PHONY: all lib perf tests run check check-layers check-lib check-asan check-kmod deps kmod \
	kmod-clean install install-kmod clean

# The module is part of `make` and `make install` when KDIR holds kernel
# headers (the running kernel's by default); `make run` never needs it.
KMOD_BUILDABLE := $(wildcard $(KDIR)/Makefile)

all: lib perf tests $(if $(KMOD_BUILDABLE),kmod)

lib: $(LIBSO) $(LIBA) $(BUILD)/lib/ccom.pc

$(BUILD)/libccom/%.o: libccom/%.c $(wildcard libccom/include/*.h) $(wildcard libccom/*/*.h)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LIB_CFLAGS) -c $< -o $@

$(LIBSO): $(LIB_OBJS) libccom/libccom.map
	@mkdir -p $(dir $@)
	$(Q)$(CC) -shared -o $@ $(LIB_OBJS) -Wl,-soname,libccom.so.1 \
		-Wl,--version-script=libccom/libccom.map $(LDLIBS_COMMON)
	$(Q)ln -sf libccom.so.1 $(BUILD)/lib/libccom.so

$(LIBA): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $(LIB_OBJS)

$(BUILD)/lib/ccom.pc: libccom/ccom.pc.in
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|; s|@VERSION@|0.1.0|' $< > $@

perf: $(PERF_BIN)

# ccom-perf links the static library: `make run` needs no install step.
$(PERF_BIN): $(PERF_SRCS) $(wildcard tools/ccom-perf/*.h) $(LIBA)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_COMMON) $(CPPFLAGS_COMMON) -o $@ $(PERF_SRCS) $(LIBA) $(LDLIBS_COMMON)

tests: $(TEST_BINS)

$(BUILD)/selftests/libccom/%: selftests/libccom/%.c $(wildcard selftests/libccom/*.h) $(LIBA)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_COMMON) $(CPPFLAGS_COMMON) -Iselftests/libccom -o $@ $< $(LIBA) $(LDLIBS_COMMON)

run: $(PERF_BIN)
	$(PERF_BIN) allreduce -n 4 -b 8 -e 64M -f 4

deps:
	tools/deps/install

# libccom's folders stay one-way (Documentation/libccom/architecture.rst).
check-layers:
	@if tools/check-layers; then echo "1 passed, 0 failed"; \
	else echo "0 passed, 1 failed"; exit 1; fi

check-lib: all
	@mkdir -p $(LOGS)
	selftests/libccom/run $(BUILD) 2>&1 | tee $(LOGS)/lib.log; exit $${PIPESTATUS[0]}

check-asan:
	$(MAKE) BUILD=$(BUILD)/asan SAN=1 OPT=-O1 all
	@mkdir -p $(LOGS)
	CCOM_TEST_SANITIZER=1 selftests/libccom/run $(BUILD)/asan 2>&1 | tee $(LOGS)/asan.log; \
		exit $${PIPESTATUS[0]}

# The driver's kselftests, libccom's kdev tests, the net_ib tests over
# soft-RoCE and the netlink/ccomctl tests, in the VM on both kernels; every
# part runs even if one fails.
check-kmod: all ccomctl ccomd inspect-tests
	@mkdir -p $(LOGS); rc=0; \
	tools/vm/check-kmod 2>&1 | tee $(LOGS)/kmod.log; [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	selftests/libccom/kdev/run-vm --build $(BUILD) --kernel 6.1 --kernel 6.12 2>&1 | \
		tee $(LOGS)/kdev.log; [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	selftests/libccom/ib/run-vm --build $(BUILD) --kernel 6.1 --kernel 6.12 2>&1 | \
		tee $(LOGS)/ib.log; [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	for k in 6.1 6.12; do \
		echo "== netlink and ccomctl tests on $$k (TCG guest)"; \
		tools/vm/run --kernel $$k -- selftests/inspect/vm-netlink $(BUILD) 2>&1 | \
			tee $(LOGS)/netlink-$$k.log; [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	done; \
	tools/check-summary "check-kmod" $(LOGS)/kmod.log $(LOGS)/kdev.log $(LOGS)/ib.log \
		$(LOGS)/netlink-6.1.log $(LOGS)/netlink-6.12.log; \
	exit $$rc

# ccomctl, ccomd and their tests (need libnl-3, json-c, libmicrohttpd).
include tools/inspect.mk

# Every part runs even if an earlier one failed; the last line sums the
# parts and the exit status says whether all passed.
check: deps
	@rm -rf $(LOGS); mkdir -p $(LOGS); rc=0; \
	$(MAKE) -s check-layers 2>&1 | tee $(LOGS)/layers.log; [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	$(MAKE) check-lib || rc=1; \
	$(MAKE) check-asan || rc=1; \
	$(MAKE) check-inspect 2>&1 | tee $(LOGS)/inspect.log; [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	$(MAKE) check-kmod 2>&1 | tee $(LOGS)/kmod-all.log; [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	if [ $$rc -ne 0 ]; then echo "make check: FAILED"; else echo "make check: all parts passed"; fi; \
	tools/check-summary "make check" $(LOGS)/layers.log $(LOGS)/lib.log $(LOGS)/asan.log $(LOGS)/inspect.log \
		$(LOGS)/kmod-all.log; \
	exit $$rc

kmod:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

kmod-clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean

PREFIX ?= /usr/local
install: lib perf $(if $(KMOD_BUILDABLE),install-kmod)
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 0755 $(LIBSO) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libccom.so.1 $(DESTDIR)$(PREFIX)/lib/libccom.so
	install -m 0644 $(LIBA) $(DESTDIR)$(PREFIX)/lib/
	install -m 0644 libccom/include/ccom.h $(DESTDIR)$(PREFIX)/include/
	install -m 0644 $(BUILD)/lib/ccom.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/
	install -m 0755 $(PERF_BIN) $(DESTDIR)$(PREFIX)/bin/

install-kmod:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install
	depmod -a $(notdir $(patsubst %/build,%,$(KDIR)))

clean:
	rm -rf $(BUILD)
