// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz-client: a hostile D-Bus 1 client for a bus daemon (kdbus-proxy or
 * dbus-daemon). For SECONDS it opens connection after connection and sends
 * random byte streams, random SASL lines, or (after a valid SASL + Hello)
 * mutated valid messages: bit flips, byte overwrites, truncation, inserted
 * bytes, bogus lengths. Each connection is then read for a short while and
 * closed. It never expects anything; test-proxy.sh checks afterwards that
 * the bus is alive and that a well-behaved client still works.
 *
 *   fuzz-client ADDRESS SECONDS [SEED]
 * Exit 0 after the run; 1 if it could not connect at all.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>

#include "dbus1.h"

static uint64_t rng;

static uint32_t rnd(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return (uint32_t)(rng >> 16);
}

/* a valid message of a random kind, sealed, copied into *out */
static size_t valid_message(uint8_t **out, uint32_t serial)
{
        static const char *members[] = { "Hello", "GetId", "ListNames", "RequestName",
                                         "AddMatch", "NameHasOwner", "GetNameOwner",
                                         "Ping", "Introspect", "Get" };
        struct kdbus_message *m = NULL;
        const void *data;
        size_t size;
        uint32_t k = rnd() % 6;

        if (k == 0)
                kdbus_message_new_signal(&m, "/org/t/Fuzz", "org.t.Fuzz", "Sig");
        else if (k == 1)
                kdbus_message_new_method_call(&m, "org.t.Nobody", "/x", "org.t.X", "Y");
        else
                kdbus_message_new_method_call(&m, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                              rnd() % 4 ? "org.freedesktop.DBus" : NULL,
                                              members[rnd() % 10]);
        switch (rnd() % 5) {
        case 0:
                kdbus_message_append(m, "s", "org.t.Fuzz");
                break;
        case 1:
                kdbus_message_append(m, "su", "org.t.Fuzz", rnd() % 8);
                break;
        case 2:
                kdbus_message_append(m, "s", "type='signal',arg0='x'");
                break;
        case 3:
                kdbus_message_append(m, "a{sv}", 2, "a", "i", 1, "b", "as", 2, "x", "y");
                break;
        default:
                break;
        }
        kdbus_message_seal(m, serial, NULL);
        kdbus_message_get_data(m, &data, &size);
        *out = malloc(size + 64);
        memcpy(*out, data, size);
        kdbus_message_unref(m);
        return size;
}

static size_t mutate(uint8_t *p, size_t n)
{
        uint32_t k = 1 + rnd() % 4;

        for (uint32_t i = 0; i < k && n > 0; i++) {
                switch (rnd() % 6) {
                case 0: /* bit flip */
                        p[rnd() % n] ^= (uint8_t)(1u << (rnd() % 8));
                        break;
                case 1: /* random byte */
                        p[rnd() % n] = (uint8_t)rnd();
                        break;
                case 2: /* truncate */
                        n = rnd() % n;
                        break;
                case 3: /* a length field: body length or field array length */
                        if (n >= 16) {
                                uint32_t v = rnd() % 3 ? rnd() : 0xffffffffu - rnd() % 16;

                                memcpy(p + (rnd() % 2 ? 4 : 12), &v, 4);
                        }
                        break;
                case 4: /* insert bytes (there is room for 64) */
                        {
                                size_t at = rnd() % n, k2 = 1 + rnd() % 8;

                                memmove(p + at + k2, p + at, n - at);
                                for (size_t j = 0; j < k2; j++)
                                        p[at + j] = (uint8_t)rnd();
                                n += k2;
                        }
                        break;
                default: /* endianness, type or version byte */
                        p[rnd() % 4] = (uint8_t)rnd();
                        break;
                }
        }
        return n;
}

static void drain(int fd, int ms)
{
        uint64_t end = d1_now_ms() + (uint64_t)ms;
        char b[4096];

        while (d1_now_ms() < end && d1_wait(fd, (int)(end - d1_now_ms())) > 0)
                if (read(fd, b, sizeof(b)) <= 0)
                        break;
}

int main(int argc, char **argv)
{
        unsigned long conns = 0, sent = 0, refused = 0;
        uint64_t end;

        if (argc < 3) {
                fprintf(stderr, "usage: fuzz-client ADDRESS SECONDS [SEED]\n");
                return 2;
        }
        signal(SIGPIPE, SIG_IGN);
        rng = argc > 3 ? strtoull(argv[3], NULL, 0) : (uint64_t)getpid() * 2654435761u + d1_now_ms();
        if (rng == 0)
                rng = 1;
        printf("seed %llu\n", (unsigned long long)rng);
        end = d1_now_ms() + (uint64_t)atoi(argv[2]) * 1000;
        while (d1_now_ms() < end) {
                int fd = d1_connect_fd(argv[1]);
                uint32_t mode = rnd() % 4;
                uint8_t buf[4096];

                if (fd < 0) {
                        if (++refused > 100 && conns == 0) {
                                fprintf(stderr, "fuzz-client: cannot connect: %s\n", strerror(-fd));
                                return 1;
                        }
                        usleep(10000);
                        continue;
                }
                conns++;
                if (mode == 0) {
                        /* random bytes, sometimes after the initial NUL */
                        size_t n = 1 + rnd() % sizeof(buf);

                        for (size_t i = 0; i < n; i++)
                                buf[i] = (uint8_t)rnd();
                        if (rnd() % 2)
                                buf[0] = 0;
                        d1_write_all(fd, buf, n);
                } else if (mode == 1) {
                        /* SASL-looking lines with random words */
                        static const char *words[] = { "AUTH", "EXTERNAL", "ANONYMOUS", "DBUS_COOKIE_SHA1",
                                                       "BEGIN", "DATA", "CANCEL", "ERROR",
                                                       "NEGOTIATE_UNIX_FD", "30", "zz", "\xff" };
                        size_t n = 0;

                        buf[n++] = 0;
                        for (uint32_t l = rnd() % 6; l > 0; l--) {
                                for (uint32_t w = 1 + rnd() % 3; w > 0; w--)
                                        n += (size_t)snprintf((char *)buf + n, 64, "%s ",
                                                              words[rnd() % 12]);
                                buf[n - 1] = '\r';
                                buf[n++] = '\n';
                        }
                        d1_write_all(fd, buf, n);
                } else {
                        /* a valid SASL (sometimes Hello), then mutated messages */
                        unsigned flags = D1_AUTH_IR | (rnd() % 2 ? D1_AUTH_FDS : 0);
                        struct d1 c = { .fd = fd };

                        if (d1_auth(fd, flags, 2000) < 0)
                                goto next;
                        if (mode == 3 && d1_hello(&c, 2000) < 0)
                                goto next;
                        for (uint32_t k = 1 + rnd() % 8; k > 0; k--) {
                                uint8_t *p = NULL;
                                size_t n = valid_message(&p, 100 + k);

                                if (rnd() % 4)
                                        n = mutate(p, n);
                                if (d1_write_all(fd, p, n) < 0) {
                                        free(p);
                                        break;
                                }
                                free(p);
                                sent++;
                        }
                        c.fd = -1;
                        d1_close(&c);
                }
next:
                drain(fd, 20);
                close(fd);
        }
        printf("%lu connections, %lu mutated/valid messages sent\n", conns, sent);
        return conns > 0 ? 0 : 1;
}
