# SPDX-License-Identifier: MIT
#
# examples/ from the top level, included by the Makefile:
#   make examples         build them against the in-tree library through
#                         pkg-config (a ccom.pc pointing at build/)
#   make check-examples   build and run them (examples/run)

EXAMPLES_BIN := $(BUILD)/examples
EXAMPLES_PC := $(BUILD)/pkgconfig/ccom.pc

.PHONY: examples check-examples

$(EXAMPLES_PC): libccom/ccom.pc.in
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@PREFIX@|$(CURDIR)|' -e 's|@VERSION@|$(CCOM_VERSION)|' \
		-e 's|^libdir=.*|libdir=$(CURDIR)/$(BUILD)/lib|' \
		-e 's|^includedir=.*|includedir=$(CURDIR)/libccom/include|' $< > $@

examples: lib $(EXAMPLES_PC)
	@mkdir -p $(EXAMPLES_BIN)
	PKG_CONFIG_PATH=$(CURDIR)/$(dir $(EXAMPLES_PC)) $(MAKE) -C examples O=$(CURDIR)/$(EXAMPLES_BIN)

check-examples: examples
	@mkdir -p $(LOGS)
	LD_LIBRARY_PATH=$(CURDIR)/$(BUILD)/lib examples/run $(EXAMPLES_BIN) 2>&1 | tee $(LOGS)/examples.log; \
		exit $${PIPESTATUS[0]}
