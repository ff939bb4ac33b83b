/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The server side of D-Bus SASL (EXTERNAL only) as a pure state machine
 * over the bytes a client wrote: no I/O, so it is tested on the host.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROXY_SASL_MAX_LINE     16384
#define PROXY_SASL_MAX_REJECTS  8

enum proxy_sasl_state {
        PROXY_SASL_NUL,                 /* waiting for the initial NUL byte */
        PROXY_SASL_WAIT_AUTH,
        PROXY_SASL_WAIT_DATA,
        PROXY_SASL_WAIT_BEGIN,
        PROXY_SASL_DONE,
};

struct proxy_sasl {
        enum proxy_sasl_state state;
        uid_t uid;                      /* from SO_PEERCRED */
        bool refuse;                    /* connect policy said no: REJECT every AUTH */
        bool unix_fd;                   /* NEGOTIATE_UNIX_FD agreed */
        unsigned int n_rejected;
        char guid[33];
};

void proxy_sasl_init(struct proxy_sasl *s, uid_t uid, const char *guid, bool refuse);

/*
 * Consume what can be consumed of @in (@len bytes): the NUL byte or one
 * complete line. *consumed is the number of bytes used, @reply (at least
 * 128 bytes) the answer to write (may be empty).
 *
 * Return: 0 more input needed (nothing consumed), 1 a line was handled,
 * 2 BEGIN was handled (every byte after it is the message stream), or
 * -EPROTO / -EACCES when the connection must be dropped.
 */
int proxy_sasl_feed(struct proxy_sasl *s, const char *in, size_t len, size_t *consumed,
                    char *reply, size_t reply_size);
