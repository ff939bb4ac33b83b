/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * A minimal D-Bus 1 stream connection for the bench programs: SASL
 * EXTERNAL as the client, messages framed with kdbus_message_peek_size()
 * and parsed with kdbus_message_parse() (libkdbus's classic marshaller),
 * descriptors passed with SCM_RIGHTS. Blocking, single-threaded, header
 * only (static functions) so each static program compiles it in.
 *
 * Everything read from the peer is validated by the parser; a bad
 * message or a protocol violation is an error return, never an abort.
 */

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "message.h"

#define D1_MAX_FDS 16

struct d1 {
        int fd;
        uint8_t *buf;           /* received bytes not yet consumed */
        size_t len, cap;
        int fds[D1_MAX_FDS];    /* received descriptors not yet attached */
        size_t n_fds;
        uint32_t serial;
        char *unique_name;
};

static inline int64_t d1_now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void d1_init(struct d1 *c, int fd)
{
        memset(c, 0, sizeof(*c));
        c->fd = fd;
}

static inline void d1_close(struct d1 *c)
{
        for (size_t i = 0; i < c->n_fds; i++)
                close(c->fds[i]);
        if (c->fd >= 0)
                close(c->fd);
        free(c->buf);
        free(c->unique_name);
        memset(c, 0, sizeof(*c));
        c->fd = -1;
}

/* "unix:path=P" or "unix:abstract=P" (first address of a list) or a plain path */
static inline int d1_connect_address(const char *address)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *p = address;
        socklen_t salen;
        size_t n;
        bool abstract = false;
        int fd;

        if (!strncmp(p, "unix:", 5)) {
                p += 5;
                if (!strncmp(p, "path=", 5)) {
                        p += 5;
                } else if (!strncmp(p, "abstract=", 9)) {
                        p += 9;
                        abstract = true;
                } else {
                        return -EINVAL;
                }
        }
        n = strcspn(p, ",;");
        if (n == 0 || n + 1 >= sizeof(sa.sun_path))
                return -EINVAL;
        memcpy(sa.sun_path + abstract, p, n);
        salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + abstract);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *)&sa, salen) < 0) {
                int r = -errno;

                close(fd);
                return r;
        }
        return fd;
}

static inline int d1_write_all(int fd, const void *data, size_t size)
{
        const uint8_t *p = data;

        while (size) {
                ssize_t n = send(fd, p, size, MSG_NOSIGNAL);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += n;
                size -= (size_t)n;
        }
        return 0;
}

/* wait up to @deadline_ms (CLOCK_MONOTONIC ms, <0: forever) and read more */
static inline int d1_fill(struct d1 *c, int64_t deadline_ms)
{
        union {
                struct cmsghdr h;
                uint8_t b[CMSG_SPACE(sizeof(int) * D1_MAX_FDS)];
        } ctl;
        struct msghdr mh = { 0 };
        struct iovec iov;
        ssize_t n;

        for (;;) {
                struct pollfd p = { .fd = c->fd, .events = POLLIN };
                int timeout = -1, r;

                if (deadline_ms >= 0) {
                        int64_t left = deadline_ms - d1_now_ms();

                        timeout = left > 0 ? (int)left : 0;
                }
                r = poll(&p, 1, timeout);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        return -ETIMEDOUT;
                break;
        }
        if (c->cap - c->len < 65536) {
                size_t cap = c->cap ? c->cap * 2 : 131072;
                uint8_t *b;

                while (cap - c->len < 65536)
                        cap *= 2;
                b = realloc(c->buf, cap);
                if (!b)
                        return -ENOMEM;
                c->buf = b;
                c->cap = cap;
        }
        iov.iov_base = c->buf + c->len;
        iov.iov_len = c->cap - c->len;
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        mh.msg_control = &ctl;
        mh.msg_controllen = sizeof(ctl);
        n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC);
        if (n < 0)
                return errno == EINTR || errno == EAGAIN ? 0 : -errno;
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
                if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
                        continue;
                size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                int *f = (int *)CMSG_DATA(cm);

                for (size_t i = 0; i < k; i++) {
                        if (c->n_fds < D1_MAX_FDS)
                                c->fds[c->n_fds++] = f[i];
                        else
                                close(f[i]);
                }
        }
        if (n == 0)
                return -ECONNRESET;
        c->len += (size_t)n;
        return 0;
}

/* one line of the SASL exchange (without CR LF) into @line */
static inline int d1_read_line(struct d1 *c, char *line, size_t size, int64_t deadline_ms)
{
        for (;;) {
                uint8_t *e = c->len ? memchr(c->buf, '\n', c->len) : NULL;

                if (e) {
                        size_t n = (size_t)(e - c->buf) + 1;
                        size_t k = n >= 2 && e[-1] == '\r' ? n - 2 : n - 1;

                        if (k >= size)
                                return -EBADMSG;
                        memcpy(line, c->buf, k);
                        line[k] = 0;
                        memmove(c->buf, c->buf + n, c->len - n);
                        c->len -= n;
                        return 0;
                }
                if (c->len > 4096)
                        return -EBADMSG;
                int r = d1_fill(c, deadline_ms);
                if (r < 0)
                        return r;
        }
}

/* client side of SASL EXTERNAL; @unix_fd: negotiate descriptor passing */
static inline int d1_auth(struct d1 *c, bool unix_fd, int64_t deadline_ms)
{
        char buf[128], line[512];
        int r;

        r = d1_write_all(c->fd, "", 1);
        if (r < 0)
                return r;
        {
                char uid[16], hex[40];
                size_t i;

                snprintf(uid, sizeof(uid), "%u", (unsigned)geteuid());
                for (i = 0; uid[i]; i++)
                        sprintf(hex + 2 * i, "%02x", (unsigned char)uid[i]);
                snprintf(buf, sizeof(buf), "AUTH EXTERNAL %s\r\n", hex);
        }
        r = d1_write_all(c->fd, buf, strlen(buf));
        if (r < 0)
                return r;
        r = d1_read_line(c, line, sizeof(line), deadline_ms);
        if (r < 0)
                return r;
        if (strncmp(line, "OK ", 3))
                return -EACCES;
        if (unix_fd) {
                r = d1_write_all(c->fd, "NEGOTIATE_UNIX_FD\r\n", 19);
                if (r < 0)
                        return r;
                r = d1_read_line(c, line, sizeof(line), deadline_ms);
                if (r < 0)
                        return r;
                if (strcmp(line, "AGREE_UNIX_FD"))
                        return -EPROTONOSUPPORT;
        }
        return d1_write_all(c->fd, "BEGIN\r\n", 7);
}

/* seal (next serial) and send @m with the descriptors @fds */
static inline int d1_send(struct d1 *c, struct kdbus_message *m, const int *fds, size_t n_fds,
                          uint32_t *serial)
{
        union {
                struct cmsghdr h;
                uint8_t b[CMSG_SPACE(sizeof(int) * D1_MAX_FDS)];
        } ctl;
        struct msghdr mh = { 0 };
        struct iovec iov;
        const void *data;
        size_t size;
        ssize_t n;
        int r;

        if (n_fds > D1_MAX_FDS)
                return -E2BIG;
        if (!kdbus_message_is_sealed(m)) {
                if (++c->serial == 0)
                        c->serial = 1;
                r = kdbus_message_seal(m, c->serial, NULL);
                if (r < 0)
                        return r;
        }
        r = kdbus_message_get_data(m, &data, &size);
        if (r < 0)
                return r;
        if (serial)
                *serial = kdbus_message_get_serial(m);
        iov.iov_base = (void *)data;
        iov.iov_len = size;
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        if (n_fds) {
                memset(&ctl, 0, sizeof(ctl));
                mh.msg_control = &ctl;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
                struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
                cm->cmsg_level = SOL_SOCKET;
                cm->cmsg_type = SCM_RIGHTS;
                cm->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
                memcpy(CMSG_DATA(cm), fds, sizeof(int) * n_fds);
        }
        do
                n = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if ((size_t)n < size)
                return d1_write_all(c->fd, (const uint8_t *)data + n, size - (size_t)n);
        return 0;
}

/* the next complete message (parsed, descriptors attached) */
static inline int d1_recv(struct d1 *c, struct kdbus_message **ret, int64_t deadline_ms)
{
        for (;;) {
                size_t total;
                int r;

                if (c->len >= KDBUS_MESSAGE_HEADER_SIZE) {
                        r = kdbus_message_peek_size(c->buf, c->len, &total);
                        if (r < 0)
                                return r;
                        if (c->len >= total) {
                                struct kdbus_message *m = NULL;
                                uint32_t want;

                                r = kdbus_message_parse(&m, c->buf, total);
                                memmove(c->buf, c->buf + total, c->len - total);
                                c->len -= total;
                                if (r < 0)
                                        return r;
                                want = kdbus_message_get_unix_fds(m);
                                if (want > c->n_fds) {
                                        kdbus_message_unref(m);
                                        return -EBADMSG;
                                }
                                if (want) {
                                        r = kdbus_message_attach_fds(m, c->fds, want);
                                        if (r < 0) {
                                                kdbus_message_unref(m);
                                                return r;
                                        }
                                        memmove(c->fds, c->fds + want,
                                                (c->n_fds - want) * sizeof(int));
                                        c->n_fds -= want;
                                }
                                *ret = m;
                                return 0;
                        }
                }
                r = d1_fill(c, deadline_ms);
                if (r < 0)
                        return r;
        }
}

/*
 * Send @m and wait for its reply; other messages are dropped. Returns 0
 * with *reply for a METHOD_RETURN, -EREMOTEIO with *reply for an ERROR.
 */
static inline int d1_call(struct d1 *c, struct kdbus_message *m, int64_t deadline_ms,
                          struct kdbus_message **reply)
{
        uint32_t serial, rs;
        int r;

        r = d1_send(c, m, NULL, 0, &serial);
        if (r < 0)
                return r;
        for (;;) {
                struct kdbus_message *in = NULL;

                r = d1_recv(c, &in, deadline_ms);
                if (r < 0)
                        return r;
                if ((kdbus_message_get_type(in) == KDBUS_MESSAGE_METHOD_RETURN ||
                     kdbus_message_get_type(in) == KDBUS_MESSAGE_ERROR) &&
                    kdbus_message_get_reply_serial(in, &rs) >= 0 && rs == serial) {
                        *reply = in;
                        return kdbus_message_get_type(in) == KDBUS_MESSAGE_ERROR ? -EREMOTEIO : 0;
                }
                kdbus_message_unref(in);
        }
}

/* org.freedesktop.DBus.Hello; stores the unique name */
static inline int d1_hello(struct d1 *c, int64_t deadline_ms)
{
        struct kdbus_message *m = NULL, *reply = NULL;
        const char *name;
        int r;

        r = kdbus_message_new_method_call(&m, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                          "org.freedesktop.DBus", "Hello");
        if (r < 0)
                return r;
        r = d1_call(c, m, deadline_ms, &reply);
        kdbus_message_unref(m);
        if (r >= 0 && kdbus_message_read(reply, "s", &name) >= 0) {
                free(c->unique_name);
                c->unique_name = strdup(name);
        } else if (r >= 0) {
                r = -EBADMSG;
        }
        kdbus_message_unref(reply);
        return r;
}
