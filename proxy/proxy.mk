# SPDX-License-Identifier: GPL-2.0-or-later
#
# kdbus-proxy (the D-Bus 1 compatibility daemon), a fragment included by
# proxy/Makefile. Static like kdbus-launcher, so it runs in the test VM.
# The XML policy (policy.c, expat) is built in when policy.c exists;
# without it --config-file fails with a clear error.
#
#   kdbus-proxy           the program
#   proxy-install         binary and kdbus-proxy(8)

PROXY_DIR	:= $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
PROXY_TOP	:= $(abspath $(PROXY_DIR)/..)
PROXY_SRCS	:= $(PROXY_DIR)/proxy-main.c $(PROXY_DIR)/proxy-listener.c \
		   $(PROXY_DIR)/proxy-sasl.c $(PROXY_DIR)/proxy-client.c \
		   $(PROXY_DIR)/proxy-monitor.c $(PROXY_DIR)/proxy-driver.c \
		   $(PROXY_DIR)/sd-notify.c
PROXY_HDRS	:= $(PROXY_DIR)/proxy.h $(PROXY_DIR)/proxy-sasl.h $(PROXY_DIR)/sd-notify.h
PROXY_LIB_SRCS	:= $(sort $(wildcard $(PROXY_TOP)/lib/*.c))
PROXY_CFLAGS	:= -std=gnu11 -Wall -Wextra -Werror -I$(PROXY_TOP)/include/uapi \
		   -I$(PROXY_TOP)/lib -I$(PROXY_DIR)
PROXY_LIBS	:=
ifneq ($(wildcard $(PROXY_DIR)/policy.c),)
PROXY_SRCS	+= $(PROXY_DIR)/policy.c
PROXY_HDRS	+= $(PROXY_DIR)/policy.h
PROXY_CFLAGS	+= -DPROXY_HAVE_POLICY
PROXY_LIBS	+= -lexpat
endif
CFLAGS		?= -O2 -g
PREFIX		?= /usr/local
MANDIR		?= $(PREFIX)/share/man

$(PROXY_DIR)/kdbus-proxy: $(PROXY_SRCS) $(PROXY_HDRS) $(PROXY_LIB_SRCS)
	$(CC) $(CFLAGS) $(PROXY_CFLAGS) -static -o $@ $(PROXY_SRCS) $(PROXY_LIB_SRCS) $(PROXY_LIBS)

proxy-all: $(PROXY_DIR)/kdbus-proxy

proxy-install: proxy-all
	install -D -m 0755 $(PROXY_DIR)/kdbus-proxy $(DESTDIR)$(PREFIX)/bin/kdbus-proxy
	install -D -m 0644 $(PROXY_TOP)/Documentation/man8/kdbus-proxy.8 \
		$(DESTDIR)$(MANDIR)/man8/kdbus-proxy.8

proxy-clean:
	rm -f $(PROXY_DIR)/kdbus-proxy

.PHONY: proxy-all proxy-install proxy-clean
