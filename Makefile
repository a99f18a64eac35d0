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
LIB_HASH := $(shell cat $(LIB_SRCS) libccom/include/ccom.h libccom/include/ccom_register.h 2>/dev/null | cksum | cut -d' ' -f1)

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
# Ranks of jobs across the guests of tools/vm/run --hosts (run-hosts).
HOSTS_SRCS := $(sort $(wildcard selftests/libccom/hosts/*.c))
HOSTS_BINS := $(HOSTS_SRCS:selftests/libccom/hosts/%.c=$(BUILD)/selftests/libccom/hosts/%)

.PHONY: all lib perf tests run check check-layers check-quick check-lib check-asan check-shrink-cycles check-grow-cycles check-kmod check-hosts check-hosts-all check-kdev-full fuzz deps kmod \
	kmod-clean install install-kmod clean

# The module is part of `make` and `make install` when KDIR holds kernel
# headers (the running kernel's by default); `make run` never needs it.
KMOD_BUILDABLE := $(wildcard $(KDIR)/Makefile)

all: lib perf tests $(if $(KMOD_BUILDABLE),kmod)

lib: $(LIBSO) $(LIBA) $(BUILD)/lib/ccom.pc

# -MMD: each object's .d lists the headers it includes (any depth, uapi/
# too), so a changed header rebuilds exactly the objects that use it.
$(BUILD)/libccom/%.o: libccom/%.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LIB_CFLAGS) -MMD -MP -c $< -o $@

-include $(LIB_OBJS:.o=.d)

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

tests: $(TEST_BINS) $(HOSTS_BINS)

$(BUILD)/selftests/libccom/hosts/%: selftests/libccom/hosts/%.c $(wildcard selftests/libccom/*.h) $(LIBA)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_COMMON) $(CPPFLAGS_COMMON) -Iselftests/libccom -o $@ $< $(LIBA) $(LDLIBS_COMMON)

$(BUILD)/selftests/libccom/%: selftests/libccom/%.c $(wildcard selftests/libccom/*.h) $(LIBA)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_COMMON) $(CPPFLAGS_COMMON) -Iselftests/libccom -o $@ $< $(LIBA) $(LDLIBS_COMMON)

# perf_hostsync compiles ccom-perf's hostsync.c in.
$(BUILD)/selftests/libccom/perf_hostsync: tools/ccom-perf/hostsync.c tools/ccom-perf/perf.h

# Benchmarks, not tests (not in make check): make build/bench/NAME for
# selftests/libccom/bench/NAME.c.
$(BUILD)/bench/%: selftests/libccom/bench/%.c $(wildcard selftests/libccom/*.h) $(LIBA)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_COMMON) $(CPPFLAGS_COMMON) -Iselftests/libccom -o $@ $< $(LIBA) $(LDLIBS_COMMON)

run: $(PERF_BIN)
	$(PERF_BIN) allreduce -n 4 -b 8 -e 64M -f 4

deps:
	tools/deps/install

# libccom's folders stay one-way and no C file of libccom/, kmod/ or tools/
# is over 850 lines (Documentation/libccom/architecture.rst); both run.
check-layers:
	@p=0; f=0; \
	for c in tools/check-layers tools/check-lines; do \
		if $$c; then p=$$((p + 1)); else f=$$((f + 1)); fi; \
	done; \
	echo "$$p passed, $$f failed"; [ $$f -eq 0 ]

check-lib: all
	@mkdir -p $(LOGS)
	selftests/libccom/run $(BUILD) 2>&1 | tee $(LOGS)/lib.log; exit $${PIPESTATUS[0]}

# The loop to run while changing the library: check-layers and the host
# library tests, without the sanitizer pass, the VM or the packaging; it
# leaves out the four longest tests (together about half of check-lib's
# time: hierarchical collectives over simulated hosts, the log-n matrix,
# the many-rank bootstrap, the lazy TCP connect), which check-lib runs.
# make check stays what CI runs.  Override with QUICK_SKIP= to run all.
QUICK_SKIP ?= hier_coll coll_matrix_logn boot_scalable net_lazy
QUICK_TESTS = $(filter-out $(QUICK_SKIP),$(TEST_SRCS:selftests/libccom/%.c=%))
check-quick: lib perf tests
	@mkdir -p $(LOGS); rc=0; \
	$(MAKE) -s check-layers 2>&1 | tee $(LOGS)/quick-layers.log; [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	selftests/libccom/run $(BUILD) $(QUICK_TESTS) 2>&1 | tee $(LOGS)/quick-lib.log; \
		[ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	echo "check-quick: left out (make check-lib runs them): $(or $(QUICK_SKIP),nothing)"; \
	tools/check-summary "make check-quick" $(LOGS)/quick-layers.log $(LOGS)/quick-lib.log; \
	exit $$rc

# 1000 kill-and-shrink cycles with flat fds and RSS (make check runs 200).
check-shrink-cycles: tests
	CCOM_SHRINK_CYCLES=1000 selftests/libccom/run $(BUILD) shrink_cycles

# 20 kill, shrink and grow-back cycles on shm and 20 over TCP (make check runs 4 of each).
check-grow-cycles: tests
	GROW_CYCLES=20 selftests/libccom/run $(BUILD) grow_cycles

check-asan:
	$(MAKE) BUILD=$(BUILD)/asan SAN=1 OPT=-O1 all
	@mkdir -p $(LOGS)
	CCOM_TEST_SANITIZER=1 selftests/libccom/run $(BUILD)/asan 2>&1 | tee $(LOGS)/asan.log; \
		exit $${PIPESTATUS[0]}

# The driver's kselftests, libccom's kdev tests, the net_ib tests over
# soft-RoCE, a bounded fuzz campaign and the netlink/ccomctl tests, in the
# VM on both kernels; every part runs even if one fails.  The fuzz slice is
# 30000 operations per kernel (about 30 s in TCG); make fuzz runs 1M.
# net_ib runs whole on 6.12; on 6.1 it leaves out IB_CHECK_SKIP_61, the
# library's recovery and large-message tests (about 90 s), which depend on
# libccom rather than on the kernel's rxe; make check-ib-full runs them on
# both kernels.  Each part prints when it starts ("check-kmod: ... at N s").
FUZZ_CHECK_ITERS ?= 30000
IB_CHECK_SKIP_61 ?= net_ib_big grow_ib shrink_ib net_ib_perf_hosts
check-kmod: all ccomctl ccomd inspect-tests
	@mkdir -p $(LOGS); rc=0; \
	T0=$$(date +%s); at() { echo "check-kmod: $$1 starts at $$(( $$(date +%s) - T0 )) s"; }; \
	at 'kselftests'; \
	tools/vm/check-kmod 2>&1 | tee $(LOGS)/kmod.log; [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	at 'kdev on 6.1 and 6.12'; \
	selftests/libccom/kdev/run-vm --build $(BUILD) --kernel 6.1 --kernel 6.12 2>&1 | \
		tee $(LOGS)/kdev.log; [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	at 'ib on 6.12'; \
	selftests/libccom/ib/run-vm --build $(BUILD) --kernel 6.12 2>&1 | \
		tee $(LOGS)/ib.log; [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	at 'ib on 6.1'; \
	selftests/libccom/ib/run-vm --build $(BUILD) --kernel 6.1 \
		$(foreach t,$(IB_CHECK_SKIP_61),--skip $(t)) 2>&1 | \
		tee $(LOGS)/ib-6.1.log; [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	at 'fuzz'; \
	selftests/nccom/fuzz/campaign --iters $(FUZZ_CHECK_ITERS) 2>&1 | tee $(LOGS)/fuzz.log; \
		[ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	at 'hosts on 6.12'; \
	selftests/libccom/hosts/run-hosts --build $(BUILD) --kernel 6.12 $(HOSTS_KMOD_TESTS) 2>&1 | \
		tee $(LOGS)/hosts.log; [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	at netlink; \
	for k in 6.1 6.12; do \
		echo "== netlink and ccomctl tests on $$k (TCG guest)"; \
		tools/vm/run --kernel $$k -- selftests/inspect/vm-netlink $(BUILD) 2>&1 | \
			tee $(LOGS)/netlink-$$k.log; [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	done; \
	echo "check-kmod: the parts ran in $$(( $$(date +%s) - T0 )) s"; \
	tools/check-summary "check-kmod" $(LOGS)/kmod.log $(LOGS)/kdev.log $(LOGS)/ib.log $(LOGS)/ib-6.1.log $(LOGS)/hosts.log \
		$(LOGS)/netlink-6.1.log $(LOGS)/netlink-6.12.log $(LOGS)/fuzz.log; \
	exit $$rc

# libccom across two guests of one kernel on a virtual network (tools/vm/run
# --hosts 2).  check-kmod runs, on 6.12, the tests of one boot that cover
# each feature once (HOSTS_KMOD_TESTS: TCP and soft-RoCE matrices with the
# topology dump, 2-id bootstrap, link and host loss, a multi-homed host);
# check-hosts adds the forced hierarchical/flat schedules and the host loss
# over net_ib (a second boot) and 30 % loss (netem_loss); check-hosts-all
# runs that on both kernels.  ccomctl_job: ccomctl job across 2 ccomd.
HOSTS_KMOD_TESTS ?= tcp_matrix scalable link_down ccomctl_job ib_matrix multihomed host_loss
check-hosts: all
	@mkdir -p $(LOGS)
	selftests/libccom/hosts/run-hosts --build $(BUILD) --kernel 6.12 2>&1 | \
		tee $(LOGS)/hosts.log; exit $${PIPESTATUS[0]}

check-hosts-all: all
	@mkdir -p $(LOGS)
	selftests/libccom/hosts/run-hosts --build $(BUILD) --kernel 6.1 --kernel 6.12 2>&1 | \
		tee $(LOGS)/hosts-all.log; exit $${PIPESTATUS[0]}

# The whole net_ib suite on both kernels (check-kmod leaves IB_CHECK_SKIP_61
# out on 6.1).
check-ib-full: all
	@mkdir -p $(LOGS)
	selftests/libccom/ib/run-vm --build $(BUILD) --kernel 6.1 --kernel 6.12 2>&1 | \
		tee $(LOGS)/ib-full.log; exit $${PIPESTATUS[0]}

# The 4-rank job of the mapped (CCOM_KDEV_MAP=1) kdev matrix on both
# kernels, which check-kmod leaves out (about 45 s per kernel in TCG).
check-kdev-full: all
	@mkdir -p $(LOGS)
	selftests/libccom/kdev/run-vm --build $(BUILD) --kernel 6.1 --kernel 6.12 kdev_matrix_map4 2>&1 | \
		tee $(LOGS)/kdev-full.log; exit $${PIPESTATUS[0]}

# A long fuzz campaign of the driver for the closing note: 1M operations per
# kernel by default (NCCOM_FUZZ_ITERS, NCCOM_FUZZ_SEED), about 20 minutes of
# TCG each; logs in build/fuzz/<release>/.
fuzz:
	@mkdir -p $(LOGS)
	NCCOM_FUZZ_ITERS=$${NCCOM_FUZZ_ITERS:-1000000} selftests/nccom/fuzz/campaign 2>&1 | \
		tee $(LOGS)/fuzz-long.log; exit $${PIPESTATUS[0]}

# ccomctl, ccomd and their tests (need libnl-3, json-c, libmicrohttpd).
include tools/inspect.mk
# The torch.distributed backend and its tests (python3-torch).
include python/torch.mk
# The same on torch 2.6 in a Debian 13 root (chroot).
include python/torch2.mk
# examples/ built through pkg-config and run.
include examples/examples.mk

# Every part runs even if an earlier one failed; the last line sums the
# parts and the exit status says whether all passed.
check: deps
	@rm -rf $(LOGS); mkdir -p $(LOGS); rc=0; \
	T0=$$(date +%s); at() { echo "make check: $$1 starts at $$(( $$(date +%s) - T0 )) s"; }; \
	at check-layers; \
	$(MAKE) -s check-layers 2>&1 | tee $(LOGS)/layers.log; [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	at check-lib; \
	$(MAKE) check-lib || rc=1; \
	at check-asan; \
	$(MAKE) check-asan || rc=1; \
	at check-inspect; \
	$(MAKE) check-inspect 2>&1 | tee $(LOGS)/inspect.log; [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	at check-torch; \
	$(MAKE) check-torch || rc=1; \
	at check-torch2; \
	$(MAKE) check-torch2 || rc=1; \
	at check-torch-suite; \
	$(MAKE) check-torch-suite || rc=1; \
	at check-torch2-suite; \
	$(MAKE) check-torch2-suite || rc=1; \
	at check-examples; \
	$(MAKE) check-examples || rc=1; \
	at check-install; \
	$(MAKE) check-install || rc=1; \
	at check-deb; \
	$(MAKE) check-deb || rc=1; \
	at check-deb-install; \
	$(MAKE) check-deb-install || rc=1; \
	at check-kmod; \
	$(MAKE) check-kmod 2>&1 | tee $(LOGS)/kmod-all.log; [ $${PIPESTATUS[0]} -eq 0 ] || rc=1; \
	echo "make check: the parts ran in $$(( $$(date +%s) - T0 )) s"; \
	if [ $$rc -ne 0 ]; then echo "make check: FAILED"; else echo "make check: all parts passed"; fi; \
	tools/check-summary "make check" $(LOGS)/layers.log $(LOGS)/lib.log $(LOGS)/asan.log \
		$(LOGS)/inspect.log $(LOGS)/torch.log $(LOGS)/torch2.log $(LOGS)/torch-suite.log $(LOGS)/torch2-suite.log \
		$(LOGS)/examples.log $(LOGS)/install.log $(LOGS)/deb.log $(LOGS)/deb-install.log \
		$(LOGS)/kmod-all.log; \
	exit $$rc

kmod:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# Only the module's outputs: a Kbuild clean with M= the tree root would also
# delete userspace objects and libraries under build/.
KMOD_OUTPUTS := kmod/*.o kmod/*.ko kmod/*.mod kmod/*.mod.c kmod/.*.cmd kmod/.*.d \
	kmod/modules.order Module.symvers modules.order .Module.symvers.cmd .modules.order.cmd
kmod-clean:
	rm -f $(KMOD_OUTPUTS)

# `make install [PREFIX=/usr/local] [DESTDIR=]` installs what the Debian
# packages hold (debian/rules runs it with PREFIX=/usr): the library,
# header, pkg-config file, ccom-perf, ccomctl, ccomd with its unit, config
# and man pages, the documentation the unit points to, the Python package,
# the module's DKMS source tree and, when KDIR has headers and KMOD is not
# 0, the built module.  /dev/nccom needs no udev rule: the driver creates
# it with mode 0666 (Documentation/admin-guide/nccom.rst).
CCOM_VERSION := $(shell awk '/define CCOM_MAJOR/{a=$$3} /define CCOM_MINOR/{b=$$3} \
	/define CCOM_PATCH/{c=$$3} END{print a "." b "." c}' libccom/include/ccom.h)
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/ccom
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
UNITDIR ?= $(if $(filter /usr,$(PREFIX)),/lib/systemd/system,$(PREFIX)/lib/systemd/system)
DKMSDIR ?= $(PREFIX)/src/nccom-$(CCOM_VERSION)
KMOD ?= 1
RST2MAN ?= $(firstword $(wildcard /usr/bin/rst2man) rst2man)
MAN_SRCS := $(sort $(wildcard Documentation/man/*.rst))
MAN_PAGES := $(MAN_SRCS:Documentation/man/%.rst=$(BUILD)/man/%)
INSTALL_DOCS := README.md Documentation/ccomd.rst Documentation/ccomctl.rst \
	$(wildcard Documentation/admin-guide/*.rst) $(wildcard Documentation/libccom/*.rst)
DKMS_SRCS := Kbuild $(wildcard kmod/Kbuild kmod/*.c kmod/*.h) uapi/linux/nccom.h \
	uapi/linux/nccom_genl.h

.PHONY: man install-lib install-tools install-docs install-dkms-src

man: $(MAN_PAGES)

$(BUILD)/man/%: Documentation/man/%.rst
	@mkdir -p $(dir $@)
	@command -v $(RST2MAN) >/dev/null || { echo "man pages need rst2man: apt-get install python3-docutils" >&2; exit 1; }
	$(Q)$(RST2MAN) $< | awk -v name="$(basename $*)" -v sec="$(subst .,,$(suffix $*))" \
		-f tools/man-fixup.awk > $@

install: install-lib install-tools install-docs install-python install-dkms-src \
	$(if $(filter 1,$(KMOD)),$(if $(KMOD_BUILDABLE),install-kmod))

install-lib: lib
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)
	install -m 0644 $(LIBSO) $(DESTDIR)$(LIBDIR)/
	ln -sf libccom.so.1 $(DESTDIR)$(LIBDIR)/libccom.so
	install -m 0644 $(LIBA) $(DESTDIR)$(LIBDIR)/
	install -m 0644 libccom/include/ccom.h libccom/include/ccom_register.h $(DESTDIR)$(INCLUDEDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(CCOM_VERSION)|' -e 's|^libdir=.*|libdir=$(LIBDIR)|' \
		-e 's|^includedir=.*|includedir=$(INCLUDEDIR)|' libccom/ccom.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/ccom.pc
	chmod 0644 $(DESTDIR)$(LIBDIR)/pkgconfig/ccom.pc

install-tools: perf ccomctl ccomd man
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)
	install -m 0755 $(PERF_BIN) $(CCOMCTL_BIN) $(DESTDIR)$(BINDIR)/
	install -m 0755 $(CCOMD_BIN) $(DESTDIR)$(SBINDIR)/
	for p in $(MAN_PAGES); do install -m 0644 $$p $(DESTDIR)$(MANDIR)/man$${p##*.}/ || exit 1; done
	sed -e 's|/usr/local/sbin/ccomd|$(SBINDIR)/ccomd|' -e 's|/usr/local/share/doc/ccom|$(DOCDIR)|' \
		-e 's|/etc/ccomd.conf|$(SYSCONFDIR)/ccomd.conf|g' -e '/^# Install:/,/^# enable/d' \
		daemon/ccomd.service > $(DESTDIR)$(UNITDIR)/ccomd.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/ccomd.service
	install -m 0644 daemon/ccomd.conf $(DESTDIR)$(SYSCONFDIR)/ccomd.conf

install-docs:
	install -d $(DESTDIR)$(DOCDIR)/examples
	install -m 0644 $(INSTALL_DOCS) $(DESTDIR)$(DOCDIR)/
	install -m 0644 examples/*.c examples/Makefile $(DESTDIR)$(DOCDIR)/examples/

# The module's sources as DKMS builds them (/usr/src/nccom-VERSION with PREFIX=/usr).
install-dkms-src:
	install -d $(DESTDIR)$(DKMSDIR)/kmod $(DESTDIR)$(DKMSDIR)/uapi/linux
	install -m 0644 Kbuild $(DESTDIR)$(DKMSDIR)/
	install -m 0644 $(filter kmod/%,$(DKMS_SRCS)) $(DESTDIR)$(DKMSDIR)/kmod/
	install -m 0644 $(filter uapi/%,$(DKMS_SRCS)) $(DESTDIR)$(DKMSDIR)/uapi/linux/
	sed -e 's|^PACKAGE_VERSION=.*|PACKAGE_VERSION="$(CCOM_VERSION)"|' \
		-e 's|^#   cp -r . /usr/src/nccom-1.0 && dkms install nccom/1.0|#   dkms install nccom/$(CCOM_VERSION)|' \
		dkms.conf > $(DESTDIR)$(DKMSDIR)/dkms.conf
	chmod 0644 $(DESTDIR)$(DKMSDIR)/dkms.conf

# `make deb`: the five Debian packages (debian/), built with
# dpkg-buildpackage in a copy of the tracked tree under $(BUILD)/deb (the
# .debs land there), then checked with lintian.  The check-deb* targets use
# $(DEB_STAMP): one build per state of the tree, not one per target.
DEB_DIR := $(BUILD)/deb
DEB_SRC := $(DEB_DIR)/ccom-$(CCOM_VERSION)
DEB_STAMP := $(DEB_DIR)/.built
DEB_FILES = git ls-files -z --cached --others --exclude-standard | grep -zv '^$(BUILD)/'
# (Outside a git checkout, as in the copy dpkg-buildpackage builds, no list.)
DEB_INPUTS := $(if $(wildcard .git),$(wildcard $(shell $(DEB_FILES) | tr '\0' ' ')))
.PHONY: deb deb-old
deb:
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_SRC)
	$(DEB_FILES) | xargs -0 cp --parents -t $(DEB_SRC)
	cd $(DEB_SRC) && dpkg-buildpackage -us -uc -b 2>&1 | tail -n 30; exit $${PIPESTATUS[0]}
	ls $(DEB_DIR)/*.deb
	lintian --pedantic --info $(DEB_DIR)/*.changes
	touch $(DEB_STAMP)

$(DEB_STAMP): $(DEB_INPUTS)
	$(MAKE) deb

# The same tree packaged at a lower version, DEB_OLD_VERSION, for the
# upgrade in check-deb-install (a one-entry changelog in a copy; no -dbgsym
# packages, no lintian).  Cached in $(DEB_OLD_DIR) and rebuilt only when the
# packaging (debian/, this Makefile, dkms.conf) changes.
DEB_OLD_VERSION := 0.0.9
DEB_OLD_DIR := $(BUILD)/deb-old
DEB_OLD_KEY = $(shell find debian Makefile dkms.conf -type f | sort | xargs cat | md5sum | cut -c1-16)
deb-old:
	@if [ "$$(cat $(DEB_OLD_DIR)/key 2>/dev/null)" = "$(DEB_OLD_KEY)" ] && \
		[ -f $(DEB_OLD_DIR)/nccom-dkms_$(DEB_OLD_VERSION)_all.deb ]; then \
		echo "deb-old: the $(DEB_OLD_VERSION) packages in $(DEB_OLD_DIR) are current"; exit 0; fi; \
	set -e; rm -rf $(DEB_OLD_DIR); mkdir -p $(DEB_OLD_DIR)/ccom-$(DEB_OLD_VERSION); \
	$(DEB_FILES) | xargs -0 cp --parents -t $(DEB_OLD_DIR)/ccom-$(DEB_OLD_VERSION); \
	{ printf 'ccom ($(DEB_OLD_VERSION)) unstable; urgency=medium\n\n'; \
	  printf '  * A lower version of this tree, for the upgrade test (make deb-old).\n\n'; \
	  grep -m1 '^ -- ' debian/changelog; } > $(DEB_OLD_DIR)/ccom-$(DEB_OLD_VERSION)/debian/changelog; \
	cd $(DEB_OLD_DIR)/ccom-$(DEB_OLD_VERSION) && DEB_BUILD_OPTIONS="noddebs nocheck" \
		dpkg-buildpackage -us -uc -b > ../build.log 2>&1 || { tail -n 30 ../build.log; exit 1; }; \
	echo "$(DEB_OLD_KEY)" > $(CURDIR)/$(DEB_OLD_DIR)/key; ls $(CURDIR)/$(DEB_OLD_DIR)/*.deb

# make install against the unit, man pages, pkg-config and Python
# (selftests/install; about 15 s, part of `make check`); check-deb adds
# `make deb`, the comparison of the packages' file lists with make install's
# and lintian (about 2-4 minutes on 2 cores, part of `make check`).
.PHONY: check-install check-deb
check-install: all ccomctl ccomd man
	@mkdir -p $(LOGS)
	selftests/install/check-install $(BUILD) 2>&1 | tee $(LOGS)/install.log; \
		exit $${PIPESTATUS[0]}

check-deb: $(DEB_STAMP)
	@mkdir -p $(LOGS)
	selftests/install/check-install $(BUILD) $(DEB_DIR) 2>&1 | tee $(LOGS)/deb.log; \
		exit $${PIPESTATUS[0]}

# The .debs on Debian's 6.1 and 6.12 kernels: DKMS build, modprobe, kdev
# smoke test on the installed library (selftests/install/run-vm-deb; about
# 3 minutes on 2 cores after `make deb`, part of `make check`).
.PHONY: check-deb-vm
check-deb-vm: $(DEB_STAMP)
	@mkdir -p $(LOGS)
	selftests/install/run-vm-deb $(DEB_DIR) 2>&1 | tee $(LOGS)/deb-vm.log; exit $${PIPESTATUS[0]}

# The packages installed as users install them, maintainer scripts
# running, on this host's root (needs root; purges on every exit):
# apt-get install of all at once, DKMS for every kernel with headers,
# DKMS's module in the 6.1 and 6.12 guests, the README's program,
# ccom_torch, the autopkgtest smoke tests (debian/tests), dpkg -i of each
# $(DEB_OLD_VERSION) package, the upgrade and apt-get purge
# (selftests/install/check-deb-install; part of `make check`).
.PHONY: check-deb-install
check-deb-install: $(DEB_STAMP) deb-old
	@mkdir -p $(LOGS)
	selftests/install/check-deb-install $(DEB_DIR) $(DEB_OLD_DIR) 2>&1 | \
		tee $(LOGS)/deb-install.log; exit $${PIPESTATUS[0]}

install-kmod:
	$(MAKE) -C $(KDIR) M=$(CURDIR) $(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR)) modules_install
	depmod $(if $(DESTDIR),-b $(DESTDIR)) -a $(notdir $(patsubst %/build,%,$(KDIR)))

clean:
	rm -rf $(BUILD)
