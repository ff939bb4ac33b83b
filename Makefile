# SPDX-License-Identifier: GPL-2.0-or-later
#
# kdbus: top-level build. See README.md.
#   make                 build everything (installs missing Debian packages)
#   make check [T=name]  host tests + VM tests; last line "N passed, N failed"
#   make demo            boot the VM and tell the kdbus story (examples/demo.sh)
#   make check-debug     the VM suite on the debug kernel (KASAN, kmemleak,
#                        lockdep, fault injection); scripts/check-debug.sh
#   make fuzz-kernel DURATION=s  the KCOV-guided ioctl fuzzer in the debug VM
#   make check-harness   prove the VM harness catches WARN/panic/rmmod failures
#   make bench           boot the VM, run the unicast benchmark (bench/README.md)
#   make checkpatch      checkpatch.pl --strict on kernel/ and the uapi header
#   make sparse          sparse (C=2) over the module, fails on warnings
#   make deps            apt-get what is missing
#   make dkms-install    install the module through DKMS (real machines only)
#   make clean

SHELL := /bin/bash
TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD := $(TOP)/build

# One kernel for everything: the module is built against the headers of
# the kernel the VM boots.
KVER ?= $(shell $(TOP)/scripts/kver.sh 2>/dev/null)
KDIR ?= /lib/modules/$(KVER)/build
export KVER KDIR

# Parts of the tree that exist (others are written in parallel); once all
# exist, a failure in any fails the build.
SUBDIRS := $(patsubst %/Makefile,%,$(wildcard kernel/Makefile test/kernel/Makefile \
	test/host/Makefile lib/Makefile tools/Makefile test/kernel-lib/Makefile \
	examples/Makefile))

VERSION := $(shell git -C $(TOP) describe --tags --always --dirty 2>/dev/null || echo 0.1)

all: $(SUBDIRS)

deps:
	@$(TOP)/scripts/deps.sh

$(SUBDIRS): deps
	$(MAKE) --no-print-directory -C $@

check: all
	@T="$(T)" $(TOP)/scripts/check.sh

check-debug: all
	@T="$(T)" $(TOP)/scripts/check-debug.sh

fuzz-kernel: all
	@DURATION="$(DURATION)" JOBS="$(JOBS)" $(TOP)/scripts/fuzz-kernel.sh

check-harness: deps
	@$(TOP)/vm/selftest/check.sh

demo: all
	@test -x examples/demo-memfd || { echo "examples/ is not built" >&2; exit 1; }
	@KDBUS_VM_TIMEOUT=$${KDBUS_VM_TIMEOUT:-300} $(TOP)/vm/run \
		-c "sh /host$$(readlink -f $(TOP))/examples/demo.sh"

bench: deps
	@$(TOP)/bench/run.sh

checkpatch: deps
	@$(TOP)/scripts/checkpatch.sh

sparse: deps
	@$(TOP)/scripts/sparse.sh

dkms-install:
	@test "$$(id -u)" = 0 || { echo "dkms-install: run as root" >&2; exit 1; }
	@command -v dkms >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y dkms
	-dkms remove -m kdbus -v $(VERSION) --all >/dev/null 2>&1
	$(TOP)/scripts/dkms-stage.sh /usr/src/kdbus-$(VERSION) $(VERSION)
	dkms add -m kdbus -v $(VERSION)
	dkms build -m kdbus -v $(VERSION)
	dkms install -m kdbus -v $(VERSION)
	install -D -m 0644 scripts/kdbus.conf /etc/modules-load.d/kdbus.conf

dkms-uninstall:
	-dkms remove -m kdbus -v $(VERSION) --all
	rm -rf /usr/src/kdbus-$(VERSION) /etc/modules-load.d/kdbus.conf

clean:
	@for d in $(SUBDIRS); do $(MAKE) --no-print-directory -C $$d clean || exit 1; done
	$(MAKE) --no-print-directory -C bench clean
	rm -rf $(BUILD)

.PHONY: all deps check check-debug fuzz-kernel check-harness demo bench checkpatch sparse dkms-install \
	dkms-uninstall clean $(SUBDIRS)
