/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * libkdbus internals of message.c for bus.c: what the library may skip
 * for values it made itself. Not installed.
 */

#include <stdint.h>

#include "message.h"

/*
 * kdbus_message_seal() with @sender the connection's own unique name
 * (":1.<id>" from HELLO), which is valid by construction and not checked
 * again on every message sent.
 */
int message_seal_own(struct kdbus_message *m, uint32_t serial, const char *own_unique);
