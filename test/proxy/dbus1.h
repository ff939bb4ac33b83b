/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * A minimal classic D-Bus 1 client over a unix socket for the proxy tests,
 * the client fuzzer and the benchmarks (bench/, built with -I test/proxy):
 * SASL EXTERNAL (with or without an initial response, optionally
 * pipelined with BEGIN and NEGOTIATE_UNIX_FD), Hello, sending and
 * receiving messages (descriptors too) built and parsed by libkdbus's
 * marshaller (lib/message.h). Header-only: every function is static.
 */

#include <errno.h>
#include <poll.h>
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

struct d1 {
        int fd;
        uint32_t serial;
        char unique[256];
        uint8_t *buf;
        size_t len, cap;
        int fds[16];
        size_t n_fds;
        struct kdbus_message *queue[256];       /* received while waiting for a reply */
        size_t n_queue;
        size_t read_chunk;              /* > 0: a slow reader, this many bytes per read */
        unsigned read_delay_ms;         /* ... after a pause this long */
};

static inline uint64_t d1_now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* the timeout left until @deadline (a d1_now_ms() time): 0 once it has passed */
static inline int d1_left_ms(uint64_t deadline)
{
        uint64_t now = d1_now_ms();

        if (now >= deadline)
                return 0;
        return deadline - now > INT32_MAX ? INT32_MAX : (int)(deadline - now);
}

/* "unix:path=P[,...]" or a plain path; returns the fd or -errno */
static inline int d1_connect_fd(const char *address)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *p = address;
        size_t n;
        int fd;

        if (strncmp(p, "unix:path=", 10) == 0)
                p += 10;
        n = strcspn(p, ",;");
        if (n == 0 || n >= sizeof(sa.sun_path))
                return -EINVAL;
        memcpy(sa.sun_path, p, n);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                int r = -errno;

                close(fd);
                return r;
        }
        return fd;
}

static inline int d1_write_all(int fd, const void *data, size_t size)
{
        const uint8_t *p = data;

        while (size > 0) {
                ssize_t w = send(fd, p, size, MSG_NOSIGNAL);

                if (w < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += w;
                size -= (size_t)w;
        }
        return 0;
}

/* wait for readability; 1 readable, 0 timeout */
static inline int d1_wait(int fd, int timeout_ms)
{
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int r;

        do
                r = poll(&p, 1, timeout_ms);
        while (r < 0 && errno == EINTR);
        return r < 0 ? -errno : r;
}

/* one SASL line (byte by byte: nothing after it is consumed) */
static inline int d1_read_line(int fd, char *line, size_t size, int timeout_ms)
{
        size_t n = 0;

        for (;;) {
                char c;
                ssize_t r;

                if (d1_wait(fd, timeout_ms) <= 0)
                        return -ETIMEDOUT;
                r = read(fd, &c, 1);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        return -ECONNRESET;
                if (c == '\n') {
                        if (n > 0 && line[n - 1] == '\r')
                                n--;
                        line[n] = '\0';
                        return 0;
                }
                if (n + 1 >= size)
                        return -E2BIG;
                line[n++] = c;
        }
}

enum {
        D1_AUTH_IR = 0x1,               /* AUTH EXTERNAL <uid> */
        D1_AUTH_PIPELINE = 0x2,         /* everything sent at once */
        D1_AUTH_FDS = 0x4,              /* NEGOTIATE_UNIX_FD */
};

static inline int d1_auth_tail(int fd, unsigned flags, int timeout_ms, const void *tail,
                               size_t tail_size)
{
        char uid[32], hex[64], line[512], out[1024];
        size_t i;
        int r;

        snprintf(uid, sizeof(uid), "%u", (unsigned)geteuid());
        for (i = 0; uid[i]; i++)
                snprintf(hex + 2 * i, 3, "%02x", (unsigned char)uid[i]);
        if (flags & D1_AUTH_PIPELINE) {
                size_t n;

                snprintf(out, sizeof(out), "%cAUTH EXTERNAL %s\r\n%sBEGIN\r\n", 0, hex,
                         (flags & D1_AUTH_FDS) ? "NEGOTIATE_UNIX_FD\r\n" : "");
                n = 1 + strlen(out + 1);
                if (tail_size > sizeof(out) - n)
                        return -E2BIG;
                /* the first message (Hello) in the same write, as sd-bus does */
                memcpy(out + n, tail, tail_size);
                r = d1_write_all(fd, out, n + tail_size);
                if (r < 0)
                        return r;
                r = d1_read_line(fd, line, sizeof(line), timeout_ms);
                if (r < 0)
                        return r;
                if (strncmp(line, "OK ", 3) != 0)
                        return -EACCES;
                if (flags & D1_AUTH_FDS) {
                        r = d1_read_line(fd, line, sizeof(line), timeout_ms);
                        if (r < 0)
                                return r;
                        if (strcmp(line, "AGREE_UNIX_FD") != 0)
                                return -EOPNOTSUPP;
                }
                return 0;
        }
        if (flags & D1_AUTH_IR)
                snprintf(out, sizeof(out), "%cAUTH EXTERNAL %s\r\n", 0, hex);
        else
                snprintf(out, sizeof(out), "%cAUTH EXTERNAL\r\n", 0);
        r = d1_write_all(fd, out, 1 + strlen(out + 1));
        if (r < 0)
                return r;
        r = d1_read_line(fd, line, sizeof(line), timeout_ms);
        if (r < 0)
                return r;
        if (!(flags & D1_AUTH_IR)) {
                if (strcmp(line, "DATA") != 0)
                        return -EPROTO;
                /* the spec's empty response: use the identity of the socket */
                r = d1_write_all(fd, "DATA\r\n", 6);
                if (r < 0)
                        return r;
                r = d1_read_line(fd, line, sizeof(line), timeout_ms);
                if (r < 0)
                        return r;
        }
        if (strncmp(line, "OK ", 3) != 0)
                return -EACCES;
        if (flags & D1_AUTH_FDS) {
                r = d1_write_all(fd, "NEGOTIATE_UNIX_FD\r\n", 19);
                if (r < 0)
                        return r;
                r = d1_read_line(fd, line, sizeof(line), timeout_ms);
                if (r < 0)
                        return r;
                if (strcmp(line, "AGREE_UNIX_FD") != 0)
                        return -EOPNOTSUPP;
        }
        return d1_write_all(fd, "BEGIN\r\n", 7);
}

static inline int d1_auth(int fd, unsigned flags, int timeout_ms)
{
        return d1_auth_tail(fd, flags, timeout_ms, NULL, 0);
}

/* send a built (unsealed) message: sealed with the next serial */
static inline int d1_send_fds(struct d1 *c, struct kdbus_message *m, const int *fds, size_t n_fds)
{
        const void *data;
        size_t size;
        int r;

        if (!kdbus_message_is_sealed(m)) {
                r = kdbus_message_seal(m, ++c->serial, NULL);
                if (r < 0)
                        return r;
        }
        r = kdbus_message_get_data(m, &data, &size);
        if (r < 0)
                return r;
        if (n_fds > 0) {
                char cbuf[CMSG_SPACE(sizeof(int) * 16)];
                struct iovec iov = { (void *)data, size };
                struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                                     .msg_controllen = CMSG_SPACE(sizeof(int) * n_fds) };
                struct cmsghdr *cm;
                ssize_t w;

                if (n_fds > 16)
                        return -EINVAL;
                memset(cbuf, 0, sizeof(cbuf));
                cm = CMSG_FIRSTHDR(&mh);
                cm->cmsg_level = SOL_SOCKET;
                cm->cmsg_type = SCM_RIGHTS;
                cm->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
                memcpy(CMSG_DATA(cm), fds, sizeof(int) * n_fds);
                w = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
                if (w < 0)
                        return -errno;
                if ((size_t)w < size)
                        return d1_write_all(c->fd, (const uint8_t *)data + w, size - (size_t)w);
                return 0;
        }
        return d1_write_all(c->fd, data, size);
}

static inline int d1_send(struct d1 *c, struct kdbus_message *m)
{
        return d1_send_fds(c, m, NULL, 0);
}

static inline int d1_fill(struct d1 *c, size_t want, int timeout_ms)
{
        while (c->len < want) {
                char cbuf[CMSG_SPACE(sizeof(int) * 16)];
                struct iovec iov;
                struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                                     .msg_controllen = sizeof(cbuf) };
                struct cmsghdr *cm;
                ssize_t r;

                if (c->cap < want) {
                        size_t cap = c->cap ? c->cap : 65536;
                        uint8_t *b;

                        while (cap < want)
                                cap *= 2;
                        b = realloc(c->buf, cap);
                        if (!b)
                                return -ENOMEM;
                        c->buf = b;
                        c->cap = cap;
                }
                if (timeout_ms >= 0) {
                        r = d1_wait(c->fd, timeout_ms);
                        if (r < 0)
                                return (int)r;
                        if (r == 0)
                                return -ETIMEDOUT;
                }
                iov.iov_base = c->buf + c->len;
                iov.iov_len = c->cap - c->len;
                if (c->read_chunk) {
                        struct timespec pause = {
                                .tv_sec = c->read_delay_ms / 1000,
                                .tv_nsec = (long)(c->read_delay_ms % 1000) * 1000000L,
                        };

                        if (iov.iov_len > c->read_chunk)
                                iov.iov_len = c->read_chunk;
                        nanosleep(&pause, NULL);
                }
                r = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        return -ECONNRESET;
                for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
                        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
                                size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                                int *f = (int *)CMSG_DATA(cm);

                                for (size_t j = 0; j < k; j++) {
                                        if (c->n_fds < 16)
                                                c->fds[c->n_fds++] = f[j];
                                        else
                                                close(f[j]);
                                }
                        }
                }
                c->len += (size_t)r;
        }
        return 0;
}

/*
 * Receive one message (timeout_ms < 0: block). -ETIMEDOUT, -ECONNRESET on
 * EOF, -EBADMSG for garbage.
 */
static inline int d1_recv(struct d1 *c, struct kdbus_message **ret, int timeout_ms)
{
        size_t total;
        int r;

        r = d1_fill(c, KDBUS_MESSAGE_HEADER_SIZE, timeout_ms);
        if (r < 0)
                return r;
        r = kdbus_message_peek_size(c->buf, c->len, &total);
        if (r < 0)
                return r;
        r = d1_fill(c, total, timeout_ms);
        if (r < 0)
                return r;
        r = kdbus_message_parse(ret, c->buf, total);
        memmove(c->buf, c->buf + total, c->len - total);
        c->len -= total;
        if (r < 0)
                return r;
        if (kdbus_message_get_unix_fds(*ret) > 0 && c->n_fds > 0) {
                size_t k = kdbus_message_get_unix_fds(*ret);

                if (k > c->n_fds)
                        k = c->n_fds;
                if (kdbus_message_attach_fds(*ret, c->fds, k) == 0) {
                        memmove(c->fds, c->fds + k, (c->n_fds - k) * sizeof(int));
                        c->n_fds -= k;
                }
        }
        return 0;
}

static inline bool d1_is_reply_to(struct kdbus_message *m, uint32_t serial)
{
        uint32_t rs;
        uint8_t t = kdbus_message_get_type(m);

        return (t == KDBUS_MESSAGE_METHOD_RETURN || t == KDBUS_MESSAGE_ERROR) &&
               kdbus_message_get_reply_serial(m, &rs) >= 0 && rs == serial;
}

/*
 * Send @m and wait for its reply; other messages are dropped. Returns 0
 * with *reply (a METHOD_RETURN or ERROR), or -errno.
 */
static inline int d1_call(struct d1 *c, struct kdbus_message *m, struct kdbus_message **reply,
                          int timeout_ms)
{
        uint64_t end = d1_now_ms() + (uint64_t)timeout_ms;
        uint32_t serial;
        int r;

        r = d1_send(c, m);
        if (r < 0)
                return r;
        serial = kdbus_message_get_serial(m);
        for (;;) {
                struct kdbus_message *in = NULL;
                uint64_t now = d1_now_ms();

                if (now >= end)
                        return -ETIMEDOUT;
                r = d1_recv(c, &in, (int)(end - now));
                if (r < 0)
                        return r;
                if (d1_is_reply_to(in, serial)) {
                        *reply = in;
                        return 0;
                }
                if (c->n_queue < 256)
                        c->queue[c->n_queue++] = in;
                else
                        kdbus_message_unref(in);
        }
}

/* the next message: queued ones first */
static inline int d1_next(struct d1 *c, struct kdbus_message **ret, int timeout_ms)
{
        if (c->n_queue > 0) {
                *ret = c->queue[0];
                memmove(c->queue, c->queue + 1, (c->n_queue - 1) * sizeof(c->queue[0]));
                c->n_queue--;
                return 0;
        }
        return d1_recv(c, ret, timeout_ms);
}

static inline int d1_driver_call(struct d1 *c, const char *member, struct kdbus_message **reply,
                                 int timeout_ms, const char *types, ...)
{
        struct kdbus_message *m = NULL;
        va_list ap;
        int r;

        r = kdbus_message_new_method_call(&m, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                          "org.freedesktop.DBus", member);
        if (r < 0)
                return r;
        va_start(ap, types);
        r = kdbus_message_appendv(m, types, ap);
        va_end(ap);
        if (r >= 0)
                r = d1_call(c, m, reply, timeout_ms);
        kdbus_message_unref(m);
        return r;
}

/* Hello: the unique name into c->unique (the reply only; signals after it stay queued) */
static inline int d1_hello(struct d1 *c, int timeout_ms)
{
        struct kdbus_message *reply = NULL;
        const char *name;
        int r;

        r = d1_driver_call(c, "Hello", &reply, timeout_ms, "");
        if (r < 0)
                return r;
        if (kdbus_message_get_type(reply) != KDBUS_MESSAGE_METHOD_RETURN ||
            kdbus_message_read(reply, "s", &name) < 0) {
                kdbus_message_unref(reply);
                return -EPROTO;
        }
        snprintf(c->unique, sizeof(c->unique), "%s", name);
        kdbus_message_unref(reply);
        return 0;
}

/* connect + SASL + Hello; c is zeroed first */
static inline int d1_open(struct d1 *c, const char *address, unsigned auth_flags, int timeout_ms)
{
        int r;

        memset(c, 0, sizeof(*c));
        c->fd = d1_connect_fd(address);
        if (c->fd < 0)
                return c->fd;
        if (auth_flags & D1_AUTH_PIPELINE) {
                /* AUTH, [NEGOTIATE_UNIX_FD,] BEGIN and Hello in one write */
                struct kdbus_message *m = NULL, *reply = NULL;
                const void *data;
                size_t size;
                const char *name;

                r = kdbus_message_new_method_call(&m, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                  "org.freedesktop.DBus", "Hello");
                if (r >= 0)
                        r = kdbus_message_seal(m, ++c->serial, NULL);
                if (r >= 0)
                        r = kdbus_message_get_data(m, &data, &size);
                if (r >= 0)
                        r = d1_auth_tail(c->fd, auth_flags, timeout_ms, data, size);
                while (r >= 0) {
                        r = d1_recv(c, &reply, timeout_ms);
                        if (r < 0)
                                break;
                        if (d1_is_reply_to(reply, c->serial)) {
                                if (kdbus_message_get_type(reply) != KDBUS_MESSAGE_METHOD_RETURN ||
                                    kdbus_message_read(reply, "s", &name) < 0)
                                        r = -EPROTO;
                                else
                                        snprintf(c->unique, sizeof(c->unique), "%s", name);
                                kdbus_message_unref(reply);
                                break;
                        }
                        kdbus_message_unref(reply);
                }
                kdbus_message_unref(m);
        } else {
                r = d1_auth(c->fd, auth_flags, timeout_ms);
                if (r >= 0)
                        r = d1_hello(c, timeout_ms);
        }
        if (r < 0) {
                close(c->fd);
                c->fd = -1;
        }
        return r;
}

static inline void d1_close(struct d1 *c)
{
        if (c->fd >= 0)
                close(c->fd);
        c->fd = -1;
        for (size_t i = 0; i < c->n_fds; i++)
                close(c->fds[i]);
        c->n_fds = 0;
        for (size_t i = 0; i < c->n_queue; i++)
                kdbus_message_unref(c->queue[i]);
        c->n_queue = 0;
        free(c->buf);
        c->buf = NULL;
        c->len = c->cap = 0;
}

/* wait until the peer closes (1), the timeout passes (0); data is discarded */
static inline int d1_wait_eof(int fd, int timeout_ms)
{
        uint64_t end = d1_now_ms() + (uint64_t)timeout_ms;
        char b[65536];

        for (;;) {
                uint64_t now = d1_now_ms();
                ssize_t r;

                if (now >= end)
                        return 0;
                if (d1_wait(fd, (int)(end - now)) <= 0)
                        continue;
                r = read(fd, b, sizeof(b));
                if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
                        return 1;
        }
}
