# SPDX-License-Identifier: GPL-2.0-or-later
#
# The activation launcher and the bus holders (Documentation/activation.md), a
# fragment included by proxy/Makefile. kdbus-proxy links LAUNCHER_SRCS to
# embed the launcher; kdbus-launcher runs it alone. Static, like kdbusctl,
# so the binaries run in the test VM's busybox guest too.
#
#   kdbus-launcher, kdbus-bus-holder      the programs
#   launcher-install                      binaries under $(DESTDIR)$(PREFIX)/bin,
#                                         their man pages under $(DESTDIR)$(MANDIR)/man8

LAUNCHER_DIR	:= $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
LAUNCHER_TOP	:= $(abspath $(LAUNCHER_DIR)/..)
LAUNCHER_SRCS	:= $(LAUNCHER_DIR)/launcher.c $(LAUNCHER_DIR)/service-file.c \
		   $(LAUNCHER_DIR)/sd-notify.c
LAUNCHER_HDRS	:= $(LAUNCHER_DIR)/launcher.h $(LAUNCHER_DIR)/service-file.h \
		   $(LAUNCHER_DIR)/sd-notify.h
LAUNCHER_LIB_SRCS := $(sort $(wildcard $(LAUNCHER_TOP)/lib/*.c))
LAUNCHER_CFLAGS	:= -std=gnu11 -Wall -Wextra -Werror -I$(LAUNCHER_TOP)/include/uapi \
		   -I$(LAUNCHER_TOP)/lib -I$(LAUNCHER_DIR)
CFLAGS		?= -O2 -g
PREFIX		?= /usr/local
MANDIR		?= $(PREFIX)/share/man

$(LAUNCHER_DIR)/kdbus-launcher: $(LAUNCHER_DIR)/launcher-main.c $(LAUNCHER_SRCS) $(LAUNCHER_HDRS)
	$(CC) $(CFLAGS) $(LAUNCHER_CFLAGS) -static -o $@ $(LAUNCHER_DIR)/launcher-main.c $(LAUNCHER_SRCS)

$(LAUNCHER_DIR)/kdbus-bus-holder: $(LAUNCHER_DIR)/bus-holder.c $(LAUNCHER_DIR)/sd-notify.c \
		$(LAUNCHER_HDRS) $(LAUNCHER_LIB_SRCS)
	$(CC) $(CFLAGS) $(LAUNCHER_CFLAGS) -static -o $@ $(LAUNCHER_DIR)/bus-holder.c \
		$(LAUNCHER_DIR)/sd-notify.c $(LAUNCHER_LIB_SRCS)

launcher-all: $(LAUNCHER_DIR)/kdbus-launcher $(LAUNCHER_DIR)/kdbus-bus-holder

launcher-install: launcher-all
	install -D -m 0755 $(LAUNCHER_DIR)/kdbus-launcher $(DESTDIR)$(PREFIX)/bin/kdbus-launcher
	install -D -m 0755 $(LAUNCHER_DIR)/kdbus-bus-holder $(DESTDIR)$(PREFIX)/bin/kdbus-bus-holder
	install -D -m 0644 $(LAUNCHER_TOP)/Documentation/man8/kdbus-launcher.8 \
		$(DESTDIR)$(MANDIR)/man8/kdbus-launcher.8
	install -D -m 0644 $(LAUNCHER_TOP)/Documentation/man8/kdbus-bus-holder.8 \
		$(DESTDIR)$(MANDIR)/man8/kdbus-bus-holder.8

launcher-clean:
	rm -f $(LAUNCHER_DIR)/kdbus-launcher $(LAUNCHER_DIR)/kdbus-bus-holder

.PHONY: launcher-all launcher-install launcher-clean
