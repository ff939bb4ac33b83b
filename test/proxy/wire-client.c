// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * wire-client: wire-level checks of a D-Bus 1 bus (kdbus-proxy or
 * dbus-daemon) for test-proxy.sh. Exit 0 when the check passed; details on
 * stdout.
 *
 *   wire-client ADDR sasl-ir|sasl-noir|sasl-pipeline|sasl-fds
 *       SASL in that style, Hello, then NameAcquired(own name) comes next
 *   wire-client ADDR names      RequestName/ReleaseName codes, ListQueuedOwners,
 *                               the signal order of an owner change
 *   wire-client ADDR serve NAME [be|slow]
 *                               a classic echo service (Echo ay, Sum ayay -> tt);
 *                               with "be" its replies are big-endian, with
 *                               "slow" it reads 256 KiB per 100 ms
 *   wire-client ADDR bigendian NAME
 *                               big-endian calls (driver GetId, NAME's Echo and Sum)
 *   wire-client ADDR idle SECONDS
 *                               connect and send nothing: exit 0 if disconnected
 *                               within SECONDS (the authentication timeout)
 *   wire-client ADDR eavesdrop SECONDS RULE [UID]
 *                               (as UID) AddMatch(RULE), print "ready", then one
 *                               line per message received within SECONDS
 *   wire-client ADDR creds [GID,GID...]
 *                               (as root: with these supplementary groups)
 *                               GetConnectionCredentials of itself, printed
 *   wire-client ADDR large MIB [NAME]
 *                               a MIB MiB body to the service NAME (default
 *                               org.t.Wire) (Sum)
 *   wire-client ADDR partial MIB SENT
 *                               announce a MIB MiB body to org.t.Wire, send SENT
 *                               MiB of it, print "sent", wait 3 s, disconnect
 *   wire-client ADDR noread SECONDS
 *                               subscribe to org.t.Wire signals, never read;
 *                               prints "dropped" or "alive" at the end
 *   wire-client ADDR flood COUNT KIB
 *                               broadcast COUNT signals of KIB KiB, then GetId
 *   wire-client ADDR garbage sasl|trunc|oversized|malformed|fds
 *                               a broken client: exit 0 if disconnected in 10 s
 *   wire-client ADDR many N     N clients connected at once
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/resource.h>

#include "dbus1.h"

#define TMO 30000

static const char *addr;

static int die(const char *what, int r)
{
        printf("FAIL %s: %s\n", what, strerror(r < 0 ? -r : r));
        return 1;
}

static int open_or_die(struct d1 *c, unsigned flags)
{
        int r = d1_open(c, addr, flags, TMO);

        if (r < 0) {
                printf("FAIL connect: %s\n", strerror(-r));
                exit(1);
        }
        return 0;
}

static int sasl(const char *style)
{
        unsigned flags = strcmp(style, "sasl-ir") == 0 ? D1_AUTH_IR :
                         strcmp(style, "sasl-noir") == 0 ? 0 :
                         strcmp(style, "sasl-pipeline") == 0 ? D1_AUTH_PIPELINE | D1_AUTH_IR :
                         D1_AUTH_IR | D1_AUTH_FDS | D1_AUTH_PIPELINE;
        struct kdbus_message *m = NULL;
        const char *name;
        struct d1 c;
        int r;

        open_or_die(&c, flags);
        printf("hello %s\n", c.unique);
        if (c.n_queue > 0) {
                printf("FAIL %s came before the reply to Hello\n",
                       kdbus_message_get_member(c.queue[0]) ?: "a message");
                return 1;
        }
        r = d1_next(&c, &m, TMO);
        if (r < 0)
                return die("no message after Hello", r);
        if (kdbus_message_get_type(m) != KDBUS_MESSAGE_SIGNAL ||
            strcmp(kdbus_message_get_member(m), "NameAcquired") != 0 ||
            kdbus_message_read(m, "s", &name) < 0 || strcmp(name, c.unique) != 0) {
                printf("FAIL the message after Hello is not NameAcquired(%s)\n", c.unique);
                return 1;
        }
        printf("then NameAcquired %s\n", name);
        kdbus_message_unref(m);
        d1_close(&c);
        return 0;
}

static int request(struct d1 *c, const char *name, uint32_t flags)
{
        struct kdbus_message *m = NULL;
        uint32_t v;
        int r;

        r = d1_driver_call(c, "RequestName", &m, TMO, "su", name, flags);
        if (r < 0)
                return r;
        r = kdbus_message_read(m, "u", &v);
        kdbus_message_unref(m);
        return r < 0 ? r : (int)v;
}

static int release(struct d1 *c, const char *name)
{
        struct kdbus_message *m = NULL;
        uint32_t v;
        int r;

        r = d1_driver_call(c, "ReleaseName", &m, TMO, "s", name);
        if (r < 0)
                return r;
        r = kdbus_message_read(m, "u", &v);
        kdbus_message_unref(m);
        return r < 0 ? r : (int)v;
}

static int check(const char *what, int got, int want)
{
        printf("%s %s: %d (want %d)\n", got == want ? "ok" : "FAIL", what, got, want);
        return got == want ? 0 : 1;
}

/* signals about org.t.Names seen by @c within @ms, as "Member Member ..." */
static void collect(struct d1 *c, const char *who, int ms)
{
        uint64_t end = d1_now_ms() + (uint64_t)ms;
        char seq[1024] = "";

        for (;;) {
                struct kdbus_message *m = NULL;
                uint64_t now = d1_now_ms();
                const char *n;

                if (now >= end || d1_next(c, &m, (int)(end - now)) < 0)
                        break;
                if (kdbus_message_get_type(m) == KDBUS_MESSAGE_SIGNAL &&
                    kdbus_message_read(m, "s", &n) >= 0 && strcmp(n, "org.t.Names") == 0) {
                        strncat(seq, " ", sizeof(seq) - strlen(seq) - 1);
                        strncat(seq, kdbus_message_get_member(m), sizeof(seq) - strlen(seq) - 1);
                }
                kdbus_message_unref(m);
        }
        printf("order %s:%s\n", who, seq);
}

static int names(void)
{
        struct kdbus_message *m = NULL;
        struct d1 a, b;
        const char *o1, *o2;
        int fail = 0;

        open_or_die(&a, D1_AUTH_IR);
        open_or_die(&b, D1_AUTH_IR);
        fail |= check("RequestName new", request(&a, "org.t.Names", 0), 1);
        fail |= check("RequestName again", request(&a, "org.t.Names", 0), 4);
        fail |= check("RequestName queued", request(&b, "org.t.Names", 0), 2);
        fail |= check("RequestName other", request(&a, "org.t.Names2", 0), 1);
        fail |= check("RequestName DO_NOT_QUEUE on an owned name", request(&b, "org.t.Names2", 4), 3);
        fail |= check("ReleaseName not owned by anyone", release(&b, "org.t.Nobody"), 2);
        fail |= check("ReleaseName of another's name", release(&b, "org.t.Names2"), 3);
        if (d1_driver_call(&a, "ListQueuedOwners", &m, TMO, "s", "org.t.Names") < 0 ||
            kdbus_message_read(m, "as", 2, &o1, &o2) < 0) {
                printf("FAIL ListQueuedOwners\n");
                fail = 1;
        } else {
                bool ok = strcmp(o1, a.unique) == 0 && strcmp(o2, b.unique) == 0;

                printf("%s ListQueuedOwners: %s %s\n", ok ? "ok" : "FAIL", o1, o2);
                fail |= !ok;
        }
        kdbus_message_unref(m);
        m = NULL;
        /* every signal about the name to both, then the hand-over */
        for (int i = 0; i < 2; i++) {
                struct d1 *c = i ? &b : &a;

                if (d1_driver_call(c, "AddMatch", &m, TMO, "s",
                                   "type='signal',sender='org.freedesktop.DBus',arg0='org.t.Names'") < 0)
                        fail = 1;
                kdbus_message_unref(m);
                m = NULL;
                /* drop what came before */
                while (c->n_queue > 0)
                        kdbus_message_unref(c->queue[--c->n_queue]);
        }
        fail |= check("ReleaseName by the owner", release(&a, "org.t.Names"), 1);
        collect(&a, "old", 1500);
        collect(&b, "new", 1500);
        d1_close(&a);
        d1_close(&b);
        return fail;
}

/* @m's bytes in big-endian order, sealed with the next serial; NULL on failure */
static struct kdbus_message *big_endian(struct d1 *c, struct kdbus_message *m)
{
        struct kdbus_message *b = NULL;

        if (!kdbus_message_is_sealed(m) && kdbus_message_seal(m, ++c->serial, NULL) < 0)
                return NULL;
        if (kdbus_message_convert(&b, m, 'B') < 0)
                return NULL;
        return b;
}

static int serve(const char *name, bool be, bool slow)
{
        struct d1 c;
        int r;

        open_or_die(&c, D1_AUTH_IR);
        if (slow) {
                c.read_chunk = 256 * 1024;
                c.read_delay_ms = 100;
        }
        if (request(&c, name, 4) != 1) {
                printf("FAIL cannot own %s\n", name);
                return 1;
        }
        printf("serving %s as %s\n", name, c.unique);
        fflush(stdout);
        for (;;) {
                struct kdbus_message *m = NULL, *reply = NULL;
                const char *member;

                r = d1_next(&c, &m, -1);
                if (r < 0)
                        return r == -ECONNRESET ? 0 : die("receive", r);
                if (kdbus_message_get_type(m) != KDBUS_MESSAGE_METHOD_CALL) {
                        kdbus_message_unref(m);
                        continue;
                }
                member = kdbus_message_get_member(m);
                if (strcmp(member, "Echo") == 0) {
                        const void *p;
                        size_t n;

                        if (kdbus_message_read_array(m, 'y', &p, &n) >= 0 &&
                            kdbus_message_new_method_return(&reply, m) >= 0)
                                kdbus_message_append_array(reply, 'y', p, n);
                } else if (strcmp(member, "Sum") == 0) {
                        uint64_t total = 0, sum = 0;
                        const void *p;
                        size_t n;

                        while (kdbus_message_read_array(m, 'y', &p, &n) > 0) {
                                total += n;
                                for (size_t i = 0; i < n; i++)
                                        sum += ((const uint8_t *)p)[i];
                        }
                        if (kdbus_message_new_method_return(&reply, m) >= 0)
                                kdbus_message_append(reply, "tt", total, sum);
                } else if (strcmp(member, "Quit") == 0) {
                        if (kdbus_message_new_method_return(&reply, m) >= 0)
                                d1_send(&c, reply);
                        kdbus_message_unref(reply);
                        kdbus_message_unref(m);
                        break;
                } else {
                        kdbus_message_new_error(&reply, m, "org.freedesktop.DBus.Error.UnknownMethod",
                                                member);
                }
                if (reply && be) {
                        struct kdbus_message *b = big_endian(&c, reply);

                        kdbus_message_unref(reply);
                        reply = b;
                }
                if (reply && !(kdbus_message_get_flags(m) & KDBUS_MESSAGE_NO_REPLY_EXPECTED))
                        d1_send(&c, reply);
                kdbus_message_unref(reply);
                kdbus_message_unref(m);
        }
        d1_close(&c);
        return 0;
}

static int large(unsigned mib, const char *name)
{
        size_t size = (size_t)mib << 20, half = size / 2;
        struct kdbus_message *m = NULL, *reply = NULL;
        uint64_t sum = 0, got_total, got_sum, t0;
        uint8_t *p = malloc(size);
        struct d1 c;
        int r;

        if (!p)
                return die("malloc", ENOMEM);
        for (size_t i = 0; i < size; i++) {
                p[i] = (uint8_t)(i * 7 + (i >> 20));
                sum += p[i];
        }
        open_or_die(&c, D1_AUTH_IR);
        kdbus_message_new_method_call(&m, name, "/org/t/Wire", "org.t.Wire", "Sum");
        r = kdbus_message_append_array(m, 'y', p, half);
        if (r >= 0)
                r = kdbus_message_append_array(m, 'y', p + half, size - half);
        free(p);
        if (r < 0)
                return die("build", r);
        t0 = d1_now_ms();
        r = d1_call(&c, m, &reply, 300000);
        if (r < 0)
                return die("call", r);
        if (kdbus_message_get_type(reply) != KDBUS_MESSAGE_METHOD_RETURN ||
            kdbus_message_read(reply, "tt", &got_total, &got_sum) < 0) {
                const char *text = NULL;

                kdbus_message_rewind(reply);
                kdbus_message_read(reply, "s", &text);
                printf("FAIL reply %s (%s) after %llu ms\n",
                       kdbus_message_get_error_name(reply) ?: "?", text ?: "",
                       (unsigned long long)(d1_now_ms() - t0));
                return 1;
        }
        printf("%s sent %zu bytes in %llu ms, service got %llu bytes, sum %s\n",
               got_total == size && got_sum == sum ? "ok" : "FAIL", size,
               (unsigned long long)(d1_now_ms() - t0), (unsigned long long)got_total,
               got_sum == sum ? "matches" : "differs");
        return got_total == size && got_sum == sum ? 0 : 1;
}

/* a client that lies about its body length: it disconnects mid-body */
static int partial(unsigned mib, unsigned sent_mib)
{
        size_t sent = (size_t)sent_mib << 20;
        uint32_t body_len = (uint32_t)mib << 20, array_len = body_len - 4;
        struct kdbus_message *m = NULL;
        const void *data;
        uint8_t *p = calloc(1, sent), *bytes;
        size_t size, hlen;
        struct d1 c;
        int r;

        if (!p)
                return die("malloc", ENOMEM);
        open_or_die(&c, D1_AUTH_IR);
        kdbus_message_new_method_call(&m, "org.t.Wire", "/org/t/Wire", "org.t.Wire", "Sum");
        r = kdbus_message_append_array(m, 'y', p, sent - 4);
        if (r >= 0)
                r = kdbus_message_seal(m, ++c.serial, NULL);
        if (r >= 0)
                r = kdbus_message_get_data(m, &data, &size);
        if (r < 0)
                return die("build", r);
        /* the header says MIB MiB: patch the body and array lengths */
        bytes = malloc(size);
        if (!bytes)
                return die("malloc", ENOMEM);
        memcpy(bytes, data, size);
        hlen = size - sent;
        memcpy(bytes + 4, &body_len, 4);
        memcpy(bytes + hlen, &array_len, 4);
        r = d1_write_all(c.fd, bytes, size);
        if (r < 0)
                return die("write", r);
        printf("sent %zu of %u bytes\n", sent, body_len);
        sleep(3);
        d1_close(&c);
        free(bytes);
        free(p);
        kdbus_message_unref(m);
        return 0;
}

/* big-endian calls: the driver, then @name's Echo and Sum */
static int bigendian(const char *name)
{
        struct kdbus_message *m = NULL, *b, *reply = NULL;
        uint8_t bytes[1000];
        const void *p;
        const char *id;
        uint64_t total = 0, sum = 0, want_sum = 0;
        size_t n;
        int fails = 0, r;
        struct d1 c;

        for (size_t i = 0; i < sizeof(bytes); i++) {
                bytes[i] = (uint8_t)(i * 13 + 1);
                want_sum += bytes[i];
        }
        open_or_die(&c, D1_AUTH_IR);
        kdbus_message_new_method_call(&m, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                      "org.freedesktop.DBus", "GetId");
        b = big_endian(&c, m);
        r = b ? d1_call(&c, b, &reply, TMO) : -ENOMEM;
        if (r < 0)
                return die("GetId", r);
        if (kdbus_message_get_type(reply) == KDBUS_MESSAGE_METHOD_RETURN &&
            kdbus_message_read(reply, "s", &id) >= 0 && strlen(id) == 32) {
                printf("ok big-endian GetId %s\n", id);
        } else {
                printf("FAIL big-endian GetId: %s\n", kdbus_message_get_error_name(reply) ?: "?");
                fails++;
        }
        kdbus_message_unref(reply);
        kdbus_message_unref(b);
        kdbus_message_unref(m);

        m = NULL;
        kdbus_message_new_method_call(&m, name, "/org/t/Wire", "org.t.Wire", "Echo");
        kdbus_message_append_array(m, 'y', bytes, sizeof(bytes));
        b = big_endian(&c, m);
        r = b ? d1_call(&c, b, &reply, TMO) : -ENOMEM;
        if (r < 0)
                return die("Echo", r);
        if (kdbus_message_get_type(reply) == KDBUS_MESSAGE_METHOD_RETURN &&
            kdbus_message_read_array(reply, 'y', &p, &n) > 0 && n == sizeof(bytes) &&
            memcmp(p, bytes, n) == 0) {
                printf("ok big-endian Echo of %zu bytes (reply in '%c')\n", n,
                       kdbus_message_get_endian(reply));
        } else {
                printf("FAIL big-endian Echo: %s\n", kdbus_message_get_error_name(reply) ?: "wrong bytes");
                fails++;
        }
        kdbus_message_unref(reply);
        kdbus_message_unref(b);
        kdbus_message_unref(m);

        m = NULL;
        kdbus_message_new_method_call(&m, name, "/org/t/Wire", "org.t.Wire", "Sum");
        kdbus_message_append_array(m, 'y', bytes, 999);
        kdbus_message_append_array(m, 'y', bytes + 999, 1);
        b = big_endian(&c, m);
        r = b ? d1_call(&c, b, &reply, TMO) : -ENOMEM;
        if (r < 0)
                return die("Sum", r);
        if (kdbus_message_get_type(reply) == KDBUS_MESSAGE_METHOD_RETURN &&
            kdbus_message_read(reply, "tt", &total, &sum) >= 0 && total == sizeof(bytes) &&
            sum == want_sum) {
                printf("ok big-endian Sum: %llu bytes, sum %llu\n", (unsigned long long)total,
                       (unsigned long long)sum);
        } else {
                printf("FAIL big-endian Sum: %llu bytes, sum %llu (want %llu)\n",
                       (unsigned long long)total, (unsigned long long)sum,
                       (unsigned long long)want_sum);
                fails++;
        }
        kdbus_message_unref(reply);
        kdbus_message_unref(b);
        kdbus_message_unref(m);
        d1_close(&c);
        return fails ? 1 : 0;
}

/* connect and stay silent: the bus must drop us within @seconds */
static int idle(unsigned seconds)
{
        uint64_t t0 = d1_now_ms();
        int fd = d1_connect_fd(addr);
        int r;

        if (fd < 0)
                return die("connect", fd);
        r = d1_wait_eof(fd, (int)seconds * 1000);
        close(fd);
        if (r == 0) {
                printf("FAIL still connected after %u s\n", seconds);
                return 1;
        }
        printf("dropped after %llu ms\n", (unsigned long long)(d1_now_ms() - t0));
        return 0;
}

static int eavesdrop(unsigned seconds, const char *rule, const char *uid)
{
        struct kdbus_message *m = NULL;
        uint64_t end;
        struct d1 c;
        int r;

        if (*uid && setuid((uid_t)atoi(uid)) < 0)
                return die("setuid", errno);
        open_or_die(&c, D1_AUTH_IR);
        r = d1_driver_call(&c, "AddMatch", &m, TMO, "s", rule);
        if (r < 0)
                return die("AddMatch", r);
        /* dbus-daemon refuses eavesdropping to the unprivileged: listen anyway */
        if (kdbus_message_get_type(m) == KDBUS_MESSAGE_METHOD_RETURN)
                printf("ready %s\n", c.unique);
        else
                printf("ready %s, AddMatch refused: %s\n", c.unique, kdbus_message_get_error_name(m));
        kdbus_message_unref(m);
        end = d1_now_ms() + seconds * 1000ULL;
        for (;;) {
                uint64_t now = d1_now_ms();
                static const char *const types[] = { "?", "call", "return", "error", "signal" };
                uint8_t t;

                if (now >= end || d1_next(&c, &m, (int)(end - now)) < 0)
                        break;
                t = kdbus_message_get_type(m);
                printf("%s %s sender=%s destination=%s\n", types[t <= 4 ? t : 0],
                       kdbus_message_get_member(m) ?: "-", kdbus_message_get_sender(m) ?: "-",
                       kdbus_message_get_destination(m) ?: "-");
                kdbus_message_unref(m);
        }
        d1_close(&c);
        return 0;
}

/* GetConnectionCredentials of ourselves, one "key: value" line each */
static int creds(const char *gids)
{
        struct kdbus_message *reply = NULL;
        gid_t groups[32];
        size_t n_groups = 0;
        struct d1 c;
        int r;

        for (const char *g = gids; *g && n_groups < 32; g = strchr(g, ',') ? strchr(g, ',') + 1 : "")
                groups[n_groups++] = (gid_t)strtoul(g, NULL, 10);
        if (n_groups && setgroups(n_groups, groups) < 0)
                return die("setgroups", errno);
        {
                /* our own label as SO_PEERSEC shows it: a socket pair's other end */
                char label[256];
                socklen_t len = sizeof(label) - 1;
                int sp[2];

                if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
                        return die("socketpair", errno);
                if (getsockopt(sp[0], SOL_SOCKET, SO_PEERSEC, label, &len) == 0 && len > 0) {
                        label[len] = 0;
                        printf("peer label: %s\n", label);
                } else {
                        printf("peer label: (none: %s)\n", len == 0 ? "empty" : strerror(errno));
                }
                close(sp[0]);
                close(sp[1]);
        }
        open_or_die(&c, D1_AUTH_IR);
        r = d1_driver_call(&c, "GetConnectionCredentials", &reply, TMO, "s", c.unique);
        if (r < 0)
                return die("GetConnectionCredentials", r);
        if (kdbus_message_get_type(reply) != KDBUS_MESSAGE_METHOD_RETURN ||
            kdbus_message_enter_container(reply, 'a', "{sv}") <= 0) {
                printf("FAIL GetConnectionCredentials: %s\n",
                       kdbus_message_get_error_name(reply) ?: "bad reply");
                return 1;
        }
        while (kdbus_message_enter_container(reply, '{', "sv") > 0) {
                const char *key = NULL, *contents = NULL;
                char type;

                kdbus_message_read_basic(reply, 's', &key);
                kdbus_message_peek_type(reply, &type, &contents);
                if (contents && kdbus_message_enter_container(reply, 'v', contents) > 0) {
                        if (strcmp(contents, "u") == 0) {
                                uint32_t v = 0;

                                kdbus_message_read_basic(reply, 'u', &v);
                                printf("%s: %u\n", key, v);
                        } else if (strcmp(contents, "au") == 0) {
                                const void *p;
                                size_t n = 0;

                                kdbus_message_read_array(reply, 'u', &p, &n);
                                printf("%s:", key);
                                for (size_t i = 0; i < n / 4; i++)
                                        printf(" %u", ((const uint32_t *)p)[i]);
                                printf("\n");
                        } else if (strcmp(contents, "ay") == 0) {
                                const void *p;
                                size_t n = 0;

                                kdbus_message_read_array(reply, 'y', &p, &n);
                                printf("%s: %.*s\n", key, (int)strnlen(p, n), (const char *)p);
                        } else {
                                printf("%s: (%s)\n", key, contents);
                                kdbus_message_skip(reply, contents);
                        }
                        kdbus_message_exit_container(reply);
                }
                kdbus_message_exit_container(reply);
        }
        kdbus_message_unref(reply);
        d1_close(&c);
        return 0;
}

static int noread(unsigned seconds)
{
        struct kdbus_message *m = NULL;
        struct d1 c;
        int r, one = 4096;

        /* small buffers, so the bus must queue (and then give up) */
        setsockopt(0, SOL_SOCKET, SO_RCVBUF, &one, sizeof(one));
        open_or_die(&c, D1_AUTH_IR);
        setsockopt(c.fd, SOL_SOCKET, SO_RCVBUF, &one, sizeof(one));
        r = d1_driver_call(&c, "AddMatch", &m, TMO, "s", "type='signal',interface='org.t.Wire'");
        if (r < 0)
                return die("AddMatch", r);
        kdbus_message_unref(m);
        printf("ready %s\n", c.unique);
        fflush(stdout);
        sleep(seconds);
        /* now read everything: EOF means the bus dropped us */
        fcntl(c.fd, F_SETFL, O_NONBLOCK);
        r = d1_wait_eof(c.fd, 3000);
        printf("%s\n", r ? "dropped" : "alive");
        return 0;
}

static int flood(unsigned count, unsigned kib)
{
        size_t size = (size_t)kib << 10;
        struct kdbus_message *m = NULL;
        uint8_t *p = calloc(1, size);
        uint64_t t0;
        struct d1 c;
        int r;

        open_or_die(&c, D1_AUTH_IR);
        t0 = d1_now_ms();
        for (unsigned i = 0; i < count; i++) {
                kdbus_message_new_signal(&m, "/org/t/Wire", "org.t.Wire", "Blob");
                kdbus_message_append_array(m, 'y', p, size);
                r = d1_send(&c, m);
                kdbus_message_unref(m);
                if (r < 0)
                        return die("send", r);
                /* drain what the bus sends us (nothing is expected) */
                while (d1_wait(c.fd, 0) > 0 && d1_recv(&c, &m, 0) == 0)
                        kdbus_message_unref(m);
        }
        r = d1_driver_call(&c, "GetId", &m, 60000, "");
        if (r < 0)
                return die("GetId after the flood", r);
        kdbus_message_unref(m);
        printf("flooded %u x %u KiB in %llu ms\n", count, kib,
               (unsigned long long)(d1_now_ms() - t0));
        free(p);
        d1_close(&c);
        return 0;
}

static int garbage(const char *kind)
{
        static const uint8_t trunc[] = { 'l', 1, 0, 1, 0xe8, 3, 0, 0, 2, 0, 0, 0, 8, 0, 0, 0 };
        static const uint8_t oversized[] = { 'l', 1, 0, 1, 0xff, 0xff, 0xff, 0x7f, 3, 0, 0, 0,
                                             8, 0, 0, 0, 1, 1, 'o', 0, 1, 0, 0, 0, '/', 0, 0, 0 };
        /* a PATH field with the signature of a string and a bad length */
        static const uint8_t malformed[] = { 'l', 1, 0, 1, 0, 0, 0, 0, 4, 0, 0, 0,
                                             16, 0, 0, 0, 1, 1, 's', 0, 0xff, 0xff, 0, 0,
                                             '/', 0, 0, 0, 0, 0, 0, 0 };
        struct d1 c = { .fd = -1 };
        int r;

        if (strcmp(kind, "sasl") == 0) {
                /* more failed attempts than a server allows, then junk */
                static const char bad[] = "\0AUTH BOGUS\r\nAUTH BOGUS\r\nAUTH BOGUS\r\n"
                                          "AUTH BOGUS\r\nAUTH BOGUS\r\nAUTH BOGUS\r\n"
                                          "AUTH BOGUS\r\nAUTH BOGUS\r\nAUTH X Y Z\r\n"
                                          "HELLO\xff\xfe garbage\r\n";

                c.fd = d1_connect_fd(addr);
                if (c.fd < 0)
                        return die("connect", c.fd);
                d1_write_all(c.fd, bad, sizeof(bad) - 1);
        } else {
                open_or_die(&c, kind[0] == 'f' ? D1_AUTH_IR : D1_AUTH_IR);
                if (strcmp(kind, "trunc") == 0) {
                        d1_write_all(c.fd, trunc, sizeof(trunc));
                        shutdown(c.fd, SHUT_WR);
                } else if (strcmp(kind, "oversized") == 0) {
                        d1_write_all(c.fd, oversized, sizeof(oversized));
                } else if (strcmp(kind, "malformed") == 0) {
                        d1_write_all(c.fd, malformed, sizeof(malformed));
                } else if (strcmp(kind, "fds") == 0) {
                        struct kdbus_message *m = NULL;
                        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

                        kdbus_message_new_method_call(&m, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                      "org.freedesktop.DBus.Peer", "Ping");
                        kdbus_message_append(m, "h", fd);
                        r = d1_send_fds(&c, m, &fd, 1);
                        printf("sent a message with an fd without negotiation: %d\n", r);
                } else {
                        return die("unknown garbage kind", EINVAL);
                }
        }
        r = d1_wait_eof(c.fd, 10000);
        printf("%s\n", r ? "disconnected" : "still connected after 10 s");
        return r ? 0 : 1;
}

static int many(unsigned n)
{
        struct rlimit rl = { n + 64, n + 64 };
        struct d1 *c = calloc(n, sizeof(*c));
        struct kdbus_message *m = NULL;
        unsigned count, got = 0, uniq = 0;
        uint64_t t0 = d1_now_ms();
        int r;

        setrlimit(RLIMIT_NOFILE, &rl);
        for (unsigned i = 0; i < n; i++) {
                r = d1_open(&c[i], addr, D1_AUTH_IR | D1_AUTH_PIPELINE, TMO);
                if (r < 0) {
                        printf("FAIL client %u: %s\n", i, strerror(-r));
                        return 1;
                }
                got++;
                /* forget its NameAcquired */
                free(c[i].buf);
                c[i].buf = NULL;
                c[i].len = c[i].cap = 0;
        }
        r = d1_driver_call(&c[n - 1], "ListNames", &m, TMO, "");
        if (r < 0 || kdbus_message_enter_container(m, 'a', "s") <= 0)
                return die("ListNames", r < 0 ? r : EPROTO);
        for (count = 0;; count++) {
                const char *s;

                if (kdbus_message_read_basic(m, 's', &s) <= 0)
                        break;
                if (s[0] == ':')
                        uniq++;
        }
        kdbus_message_unref(m);
        printf("%s %u clients connected in %llu ms, ListNames has %u unique names\n",
               uniq >= n ? "ok" : "FAIL", got, (unsigned long long)(d1_now_ms() - t0), uniq);
        for (unsigned i = 0; i < n; i++)
                d1_close(&c[i]);
        free(c);
        return uniq >= n ? 0 : 1;
}

int main(int argc, char **argv)
{
        if (argc < 3) {
                fprintf(stderr, "usage: wire-client ADDRESS MODE [ARG]\n");
                return 2;
        }
        signal(SIGPIPE, SIG_IGN);
        setvbuf(stdout, NULL, _IOLBF, 0);
        addr = argv[1];
        const char *mode = argv[2], *arg = argc > 3 ? argv[3] : "";

        if (strncmp(mode, "sasl-", 5) == 0)
                return sasl(mode);
        if (strcmp(mode, "names") == 0)
                return names();
        if (strcmp(mode, "serve") == 0)
                return serve(arg, argc > 4 && strcmp(argv[4], "be") == 0,
                             argc > 4 && strcmp(argv[4], "slow") == 0);
        if (strcmp(mode, "bigendian") == 0)
                return bigendian(arg);
        if (strcmp(mode, "idle") == 0)
                return idle((unsigned)atoi(arg));
        if (strcmp(mode, "eavesdrop") == 0 && argc > 4)
                return eavesdrop((unsigned)atoi(arg), argv[4], argc > 5 ? argv[5] : "");
        if (strcmp(mode, "creds") == 0)
                return creds(arg);
        if (strcmp(mode, "large") == 0)
                return large((unsigned)atoi(arg), argc > 4 ? argv[4] : "org.t.Wire");
        if (strcmp(mode, "partial") == 0 && argc > 4)
                return partial((unsigned)atoi(arg), (unsigned)atoi(argv[4]));
        if (strcmp(mode, "noread") == 0)
                return noread((unsigned)atoi(arg));
        if (strcmp(mode, "flood") == 0)
                return flood((unsigned)atoi(arg), argc > 4 ? (unsigned)atoi(argv[4]) : 64);
        if (strcmp(mode, "garbage") == 0)
                return garbage(arg);
        if (strcmp(mode, "many") == 0)
                return many((unsigned)atoi(arg));
        fprintf(stderr, "wire-client: unknown mode %s\n", mode);
        return 2;
}
