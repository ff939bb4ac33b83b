# SPDX-License-Identifier: GPL-2.0-or-later
#
# kdbus: top-level build. See README.md.
#   make                 build everything (installs missing Debian packages)
#   make check [T=name] [KVER=release]
#                        host tests + VM tests (booted with KVER, default
#                        Debian's 6.1); last line "N passed, N failed"
#   make check-all       the same on every kernel with image and headers
#                        (6.1, 6.12, 6.12-rt after make deps)
#   make demo            boot the VM and tell the kdbus story (examples/demo.sh)
#   make check-debug     the VM suite on the debug kernel (KASAN, kmemleak,
#                        lockdep, fault injection); scripts/check-debug.sh
#   make fuzz-kernel DURATION=s  the KCOV-guided ioctl fuzzer in the debug VM
#   make check-harness   prove the VM harness catches WARN/panic/rmmod failures
#   make bench           one VM boot: the benchmarks and the comparison with
#                        dbus-daemon/dbus-broker, charts in build/bench/ (bench/README.md)
#   make checkpatch      checkpatch.pl --strict on kernel/ and the uapi header
#   make sparse          sparse (C=2) over the module, fails on warnings
#   make deps            apt-get what is missing
#   make install         install libkdbus, kdbusctl, kdbus-proxy and the man pages under
#                        $(DESTDIR)$(PREFIX) (PREFIX defaults to /usr/local)
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
	examples/Makefile proxy/Makefile test/activation/Makefile test/proxy/Makefile))

VERSION := $(shell git -C $(TOP) describe --tags --always --dirty 2>/dev/null || echo 0.1)

all: $(SUBDIRS)

deps:
	@$(TOP)/scripts/deps.sh

$(SUBDIRS): deps
	$(MAKE) --no-print-directory -C $@

check: all
	@T="$(T)" $(TOP)/scripts/check.sh

check-all: all
	@$(TOP)/scripts/check-all.sh

check-debug: all
	@T="$(T)" FUZZ="$(FUZZ)" $(TOP)/scripts/check-debug.sh

fuzz-kernel: all
	@DURATION="$(DURATION)" JOBS="$(JOBS)" KEEP="$(KEEP)" $(TOP)/scripts/fuzz-kernel.sh

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
	@SPARSE_KVER=$(if $(filter command line environment,$(origin KVER)),$(KVER)) $(TOP)/scripts/sparse.sh

# libkdbus, kdbusctl and every man page (section 7: the ABI; kdbusctl(1),
# libkdbus(3)); DESTDIR and PREFIX are passed down unchanged
install: lib tools proxy
	$(MAKE) --no-print-directory -C lib install
	$(MAKE) --no-print-directory -C tools install
	$(MAKE) --no-print-directory -C proxy install
	$(MAKE) --no-print-directory -C systemd install
	$(MAKE) --no-print-directory -C Documentation install

dkms-install:
	@$(TOP)/scripts/dkms-install.sh $(VERSION)

dkms-uninstall:
	-dkms remove -m kdbus -v $(VERSION) --all
	rm -rf /usr/src/kdbus-$(VERSION) /etc/modules-load.d/kdbus.conf

clean:
	@for d in $(SUBDIRS); do $(MAKE) --no-print-directory -C $$d clean || exit 1; done
	$(MAKE) --no-print-directory -C bench clean
	rm -rf $(BUILD)

.PHONY: all deps check check-all check-debug fuzz-kernel check-harness demo bench checkpatch \
	sparse install dkms-install \
	dkms-uninstall clean $(SUBDIRS)
