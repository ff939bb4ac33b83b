/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * libkdbus: the native C library for kdbus (libkdbus(3)).
 *
 *   #include <kdbus/kdbus.h>      (pkg-config --cflags --libs libkdbus)
 *
 * message.h    D-Bus messages in the classic marshalling
 * bus.h        connections: HELLO, send/receive, calls, signals, names
 * match-rule.h D-Bus match rules and their kdbus translation
 * bloom.h      the bloom filter convention of kdbus signals
 */

#include "bloom.h"
#include "message.h"
#include "match-rule.h"
#include "bus.h"
