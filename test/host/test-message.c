// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * D-Bus messages (libkdbus(3), the D-Bus Specification): the
 * captured dbus-daemon and busctl bytes parsed and reproduced byte for
 * byte, round trips of every type through the varargs API in both byte
 * orders, fds, and malformed messages each refused with its errno.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "marshal.h"
#include "message-internal.h"
#include "message.h"
#include "tap.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#define _cleanup_msg_ __attribute__((cleanup(kdbus_message_unrefp)))

static size_t parse_hex(const char *hex, uint8_t *out, size_t max)
{
        size_t n = 0;
        unsigned int v;

        while (*hex) {
                if (*hex == ' ' || *hex == '\n') {
                        ++hex;
                        continue;
                }
                if (n >= max || sscanf(hex, "%2x", &v) != 1)
                        return 0;
                out[n++] = (uint8_t)v;
                hex += 2;
        }
        return n;
}

/* libkdbus(3) */
static const char hello_call[] =
        "6c 01 00 01 00 00 00 00 01 00 00 00 6d 00 00 00\n"
        "01 01 6f 00 15 00 00 00 2f 6f 72 67 2f 66 72 65\n"
        "65 64 65 73 6b 74 6f 70 2f 44 42 75 73 00 00 00\n"
        "03 01 73 00 05 00 00 00 48 65 6c 6c 6f 00 00 00\n"
        "02 01 73 00 14 00 00 00 6f 72 67 2e 66 72 65 65\n"
        "64 65 73 6b 74 6f 70 2e 44 42 75 73 00 00 00 00\n"
        "06 01 73 00 14 00 00 00 6f 72 67 2e 66 72 65 65\n"
        "64 65 73 6b 74 6f 70 2e 44 42 75 73 00 00 00 00\n";

static const char hello_reply[] =
        "6c 02 01 01 09 00 00 00 01 00 00 00 3d 00 00 00\n"
        "06 01 73 00 04 00 00 00 3a 31 2e 33 00 00 00 00\n"
        "05 01 75 00 01 00 00 00 08 01 67 00 01 73 00 00\n"
        "07 01 73 00 14 00 00 00 6f 72 67 2e 66 72 65 65\n"
        "64 65 73 6b 74 6f 70 2e 44 42 75 73 00 00 00 00\n"
        "04 00 00 00 3a 31 2e 33 00\n";

static const char name_acquired[] =
        "6c 04 01 01 09 00 00 00 02 00 00 00 8d 00 00 00\n"
        "01 01 6f 00 15 00 00 00 2f 6f 72 67 2f 66 72 65\n"
        "65 64 65 73 6b 74 6f 70 2f 44 42 75 73 00 00 00\n"
        "02 01 73 00 14 00 00 00 6f 72 67 2e 66 72 65 65\n"
        "64 65 73 6b 74 6f 70 2e 44 42 75 73 00 00 00 00\n"
        "03 01 73 00 0c 00 00 00 4e 61 6d 65 41 63 71 75\n"
        "69 72 65 64 00 00 00 00 06 01 73 00 04 00 00 00\n"
        "3a 31 2e 33 00 00 00 00 08 01 67 00 01 73 00 00\n"
        "07 01 73 00 14 00 00 00 6f 72 67 2e 66 72 65 65\n"
        "64 65 73 6b 74 6f 70 2e 44 42 75 73 00 00 00 00\n"
        "04 00 00 00 3a 31 2e 33 00\n";

static bool same_bytes(const struct kdbus_message *m, const uint8_t *exp, size_t n)
{
        const void *data;
        size_t size;

        return kdbus_message_get_data(m, &data, &size) == 0 && size == n && !memcmp(data, exp, n);
}

static bool streq(const char *a, const char *b)
{
        return a && b && !strcmp(a, b);
}

static void test_vectors(void)
{
        _cleanup_msg_ struct kdbus_message *call = NULL, *reply = NULL, *sig = NULL;
        _cleanup_msg_ struct kdbus_message *built = NULL, *built_sig = NULL;
        uint8_t call_b[256], reply_b[256], sig_b[256];
        size_t call_n, reply_n, sig_n;
        const char *s = NULL;
        uint32_t serial = 0;
        bool ok;

        call_n = parse_hex(hello_call, call_b, sizeof(call_b));
        reply_n = parse_hex(hello_reply, reply_b, sizeof(reply_b));
        sig_n = parse_hex(name_acquired, sig_b, sizeof(sig_b));
        tap_ok(call_n == 128 && reply_n == 89 && sig_n == 169, "A.7: vectors have 128, 89, 169 bytes");

        ok = kdbus_message_parse(&call, call_b, call_n) == 0 &&
             kdbus_message_get_type(call) == KDBUS_MESSAGE_METHOD_CALL &&
             kdbus_message_get_flags(call) == 0 && kdbus_message_get_serial(call) == 1 &&
             streq(kdbus_message_get_path(call), "/org/freedesktop/DBus") &&
             streq(kdbus_message_get_interface(call), "org.freedesktop.DBus") &&
             streq(kdbus_message_get_member(call), "Hello") &&
             streq(kdbus_message_get_destination(call), "org.freedesktop.DBus") &&
             !kdbus_message_get_sender(call) && streq(kdbus_message_get_signature(call), "") &&
             kdbus_message_at_end(call) && same_bytes(call, call_b, call_n);
        tap_ok(ok, "A.7: busctl's Hello call parses; its field order is kept byte for byte");

        ok = kdbus_message_parse(&reply, reply_b, reply_n) == 0 &&
             kdbus_message_get_type(reply) == KDBUS_MESSAGE_METHOD_RETURN &&
             kdbus_message_get_flags(reply) == KDBUS_MESSAGE_NO_REPLY_EXPECTED &&
             kdbus_message_get_reply_serial(reply, &serial) == 0 && serial == 1 &&
             streq(kdbus_message_get_destination(reply), ":1.3") &&
             streq(kdbus_message_get_sender(reply), "org.freedesktop.DBus") &&
             streq(kdbus_message_get_signature(reply), "s") &&
             kdbus_message_read(reply, "s", &s) == 0 && streq(s, ":1.3") &&
             kdbus_message_at_end(reply) && same_bytes(reply, reply_b, reply_n);
        tap_ok(ok, "A.7: the driver's Hello reply parses and reads \":1.3\"");

        ok = kdbus_message_parse(&sig, sig_b, sig_n) == 0 &&
             kdbus_message_get_type(sig) == KDBUS_MESSAGE_SIGNAL &&
             kdbus_message_get_serial(sig) == 2 &&
             streq(kdbus_message_get_member(sig), "NameAcquired") &&
             streq(kdbus_message_get_destination(sig), ":1.3") &&
             kdbus_message_read(sig, "s", &s) == 0 && streq(s, ":1.3") &&
             same_bytes(sig, sig_b, sig_n);
        tap_ok(ok, "A.7: the NameAcquired signal parses");

        {
                size_t total = 0;

                ok = kdbus_message_peek_size(reply_b, 16, &total) == 0 && total == 89 &&
                     kdbus_message_peek_size(sig_b, 16, &total) == 0 && total == 169 &&
                     kdbus_message_peek_size(reply_b, 15, &total) == -EBADMSG;
                tap_ok(ok, "A.7: the total size is known from the first 16 bytes");
        }

        /* build the driver's answers with the API: byte-identical to dbus-daemon */
        ok = kdbus_message_set_sender(call, ":1.3") == 0 &&
             streq(kdbus_message_get_sender(call), ":1.3") &&
             kdbus_message_new_method_return(&built, call) == 0 &&
             kdbus_message_append(built, "s", ":1.3") == 0 &&
             kdbus_message_seal(built, 1, "org.freedesktop.DBus") == 0 &&
             same_bytes(built, reply_b, reply_n);
        tap_ok(ok, "A.7: Hello reply built with the API equals dbus-daemon's bytes");

        ok = kdbus_message_new_signal(&built_sig, "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                      "NameAcquired") == 0 &&
             kdbus_message_set_destination(built_sig, ":1.3") == 0 &&
             kdbus_message_append(built_sig, "s", ":1.3") == 0 &&
             kdbus_message_seal(built_sig, 2, "org.freedesktop.DBus") == 0 &&
             same_bytes(built_sig, sig_b, sig_n);
        tap_ok(ok, "A.7: NameAcquired built with the API equals dbus-daemon's bytes");
}

static int build_everything(struct kdbus_message **ret, int fd)
{
        _cleanup_msg_ struct kdbus_message *m = NULL;
        static const uint16_t words[] = { 1, 0xffff, 3 };
        int r;

        r = kdbus_message_new_method_call(&m, "org.example.Service", "/org/example/obj",
                                          "org.example.Iface", "Everything");
        if (r < 0)
                return r;
        r = kdbus_message_append(m, "ybnqiuxtdsogh",
                                 0xfe, 5, -2, 65535, INT32_MIN, UINT32_MAX,
                                 INT64_MIN, UINT64_MAX, 2.5, "str\xc3\xa9", "/p/q", "a{sv}", fd);
        if (r < 0)
                return r;
        r = kdbus_message_append(m, "a{sv}(iasv)avaay", 2,
                                 "k1", "u", 7, "k2", "as", 2, "x", "y",
                                 -1, 3, "a", "b", "c", "t", (uint64_t)99,
                                 2, "s", "in variant", "(ib)", 4, 1,
                                 2, 2, 0xaa, 0xbb, 0);
        if (r < 0)
                return r;
        r = kdbus_message_append_array(m, 'q', words, sizeof(words));
        if (r < 0)
                return r;
        /* nested containers piecewise: a{s(ai)} */
        r = kdbus_message_open_container(m, 'a', "{s(ai)}");
        if (r >= 0)
                r = kdbus_message_open_container(m, '{', "s(ai)");
        if (r >= 0)
                r = kdbus_message_append(m, "s(ai)", "key", 2, 10, 20);
        if (r >= 0)
                r = kdbus_message_close_container(m);
        if (r >= 0)
                r = kdbus_message_close_container(m);
        if (r < 0)
                return r;
        r = kdbus_message_append_strv(m, (char *[]){ "one", "two", NULL });
        if (r < 0)
                return r;
        r = kdbus_message_seal(m, 42, ":1.7");
        if (r < 0)
                return r;
        *ret = m;
        m = NULL;
        return 0;
}

static bool read_everything(struct kdbus_message *m, bool fd_expected)
{
        uint8_t y, y1, y2;
        int b, fd = -1, sb, ib;
        int16_t n;
        uint16_t q;
        int32_t i, si;
        uint32_t u, vu;
        int64_t x;
        uint64_t t, vt;
        double d;
        const char *s, *o, *g, *k1, *k2, *a1, *a2, *c1, *c2, *c3, *vs, *key;
        const void *p;
        size_t size;
        int32_t e1, e2;
        bool ok = true;

        ok &= kdbus_message_read(m, "ybnqiuxtdsog", &y, &b, &n, &q, &i, &u, &x, &t, &d, &s, &o, &g) == 0;
        ok &= y == 0xfe && b == 1 && n == -2 && q == 65535 && i == INT32_MIN && u == UINT32_MAX &&
              x == INT64_MIN && t == UINT64_MAX && d == 2.5 && streq(s, "str\xc3\xa9") &&
              streq(o, "/p/q") && streq(g, "a{sv}");
        if (fd_expected) {
                struct stat st;

                ok &= kdbus_message_read(m, "h", &fd) == 0 && fd >= 0 && fstat(fd, &st) == 0;
        } else {
                ok &= kdbus_message_read(m, "h", &fd) == -EBADF;
                ok &= kdbus_message_skip(m, "h") == 0;
        }
        ok &= kdbus_message_read(m, "a{sv}", 2, &k1, "u", &vu, &k2, "as", 2, &a1, &a2) == 0;
        ok &= streq(k1, "k1") && vu == 7 && streq(k2, "k2") && streq(a1, "x") && streq(a2, "y");
        ok &= kdbus_message_read(m, "(iasv)", &si, 3, &c1, &c2, &c3, "t", &vt) == 0;
        ok &= si == -1 && streq(c1, "a") && streq(c2, "b") && streq(c3, "c") && vt == 99;
        ok &= kdbus_message_read(m, "av", 2, "s", &vs, "(ib)", &ib, &sb) == 0;
        ok &= streq(vs, "in variant") && ib == 4 && sb == 1;
        ok &= kdbus_message_read(m, "aay", 2, 2, &y1, &y2, 0) == 0 && y1 == 0xaa && y2 == 0xbb;
        if (kdbus_message_get_endian(m) == KDBUS_NATIVE_ENDIAN) {
                ok &= kdbus_message_read_array(m, 'q', &p, &size) == 1 && size == 6 &&
                      ((const uint16_t *)p)[1] == 0xffff;
        } else {
                uint16_t w1, w2, w3;

                ok &= kdbus_message_read(m, "aq", 3, &w1, &w2, &w3) == 0 && w2 == 0xffff;
        }
        ok &= kdbus_message_read(m, "a{s(ai)}", 1, &key, 2, &e1, &e2) == 0 && streq(key, "key") &&
              e1 == 10 && e2 == 20;
        ok &= kdbus_message_read(m, "as", 2, &a1, &a2) == 0 && streq(a1, "one") && streq(a2, "two");
        ok &= kdbus_message_at_end(m);
        return ok;
}

#define EVERYTHING_SIG "ybnqiuxtdsogha{sv}(iasv)avaayaqa{s(ai)}as"

static void test_round_trip(void)
{
        _cleanup_msg_ struct kdbus_message *m = NULL, *p = NULL, *be = NULL, *pbe = NULL, *back = NULL;
        const void *data, *data2;
        size_t size, size2;
        int pipefd[2];
        bool ok;

        if (pipe2(pipefd, O_CLOEXEC) < 0) {
                tap_ok(false, "pipe");
                return;
        }
        ok = build_everything(&m, pipefd[0]) == 0 && kdbus_message_is_sealed(m) &&
             streq(kdbus_message_get_signature(m), EVERYTHING_SIG) &&
             kdbus_message_get_unix_fds(m) == 1 && streq(kdbus_message_get_sender(m), ":1.7");
        tap_ok(ok, "round trip: every type appended and sealed, signature " EVERYTHING_SIG);
        close(pipefd[0]);
        close(pipefd[1]);
        if (!ok)
                return;

        tap_ok(read_everything(m, true), "round trip: built message reads back every value");
        tap_ok(kdbus_message_rewind(m) == 0 && read_everything(m, true),
               "round trip: rewind reads everything again");

        ok = kdbus_message_get_data(m, &data, &size) == 0 &&
             kdbus_message_parse(&p, data, size) == 0 && read_everything(p, false) &&
             kdbus_message_get_data(p, &data2, &size2) == 0 && size == size2 &&
             !memcmp(data, data2, size);
        tap_ok(ok, "round trip: parsed bytes read back (h without fds is EBADF), identical bytes");

        ok = kdbus_message_convert(&be, m, KDBUS_BIG_ENDIAN) == 0 &&
             kdbus_message_get_endian(be) == 'B' && read_everything(be, true) &&
             kdbus_message_get_data(be, &data2, &size2) == 0 &&
             kdbus_message_parse(&pbe, data2, size2) == 0 && read_everything(pbe, false);
        tap_ok(ok, "round trip: big-endian conversion reads back, also after parsing");

        ok = kdbus_message_convert(&back, pbe, KDBUS_LITTLE_ENDIAN) == 0 &&
             kdbus_message_get_data(back, &data2, &size2) == 0 && size == size2 &&
             !memcmp(data, data2, size);
        tap_ok(ok, "round trip: big-endian converted back is byte-identical to the original");
}

static void test_api_errors(void)
{
        _cleanup_msg_ struct kdbus_message *m = NULL, *e = NULL, *r = NULL;
        const char *s;
        uint32_t u, serial;
        bool ok;

        ok = kdbus_message_new_method_call(&m, NULL, "/a/", NULL, "M") == -EINVAL &&
             kdbus_message_new_method_call(&m, NULL, "/a", "noiface", "M") == -EINVAL &&
             kdbus_message_new_method_call(&m, NULL, "/a", NULL, "1M") == -EINVAL &&
             kdbus_message_new_method_call(&m, "bad..name", "/a", NULL, "M") == -EINVAL &&
             kdbus_message_new_method_call(&m, NULL, "/org/freedesktop/DBus/Local", NULL, "M") == -EINVAL &&
             kdbus_message_new_signal(&m, "/a", NULL, "M") == -EINVAL && !m;
        tap_ok(ok, "api: constructors refuse invalid names and paths with EINVAL");

        ok = kdbus_message_new_method_call(&m, ":1.4", "/a", "a.b", "M") == 0 &&
             kdbus_message_append(m, "s", "\xed\xa0\x80") == -EINVAL &&
             kdbus_message_append(m, "o", "a") == -EINVAL &&
             kdbus_message_append(m, "g", "(") == -EINVAL &&
             kdbus_message_append(m, "h", -1) == -EBADF &&
             kdbus_message_append(m, "a{sv}", 1, "k", "r", 1) == -EINVAL &&
             kdbus_message_append(m, "v", "u", 5) == 0 &&
             kdbus_message_append(m, "(us", 1, "x") == -EINVAL &&
             streq(kdbus_message_get_signature(m), "v");
        tap_ok(ok, "api: failed appends leave the message unchanged");

        ok = kdbus_message_read(m, "u", &u) == -EPERM &&
             kdbus_message_open_container(m, 'a', "s") == 0 &&
             kdbus_message_seal(m, 1, NULL) == -EBUSY &&
             kdbus_message_close_container(m) == 0 &&
             kdbus_message_seal(m, 0, NULL) == -EINVAL &&
             kdbus_message_seal(m, 1, "not a name") == -EINVAL &&
             kdbus_message_seal(m, 1, NULL) == 0 &&
             kdbus_message_append(m, "u", 1) == -EPERM &&
             kdbus_message_seal(m, 2, NULL) == -EPERM &&
             kdbus_message_set_flags(m, 0) == -EPERM;
        tap_ok(ok, "api: seal refuses open containers, serial 0, bad sender; sealed is frozen");

        ok = kdbus_message_read(m, "s", &s) == -ENXIO &&
             kdbus_message_read(m, "v", "s", &s) == -ENXIO &&
             kdbus_message_read(m, "vas", "u", &u, 1, &s) == -ENXIO &&
             kdbus_message_read(m, "v", "u", &u) == 0 && u == 5 &&
             kdbus_message_read(m, "as", 0) == 0 && kdbus_message_at_end(m) &&
             kdbus_message_read(m, "u", &u) == -ENXIO;
        tap_ok(ok, "api: reading another type is ENXIO and consumes nothing");

        ok = kdbus_message_new_error(&e, m, "org.example.Error.Failed", "it broke") == 0 &&
             kdbus_message_seal(e, 3, ":1.4") == 0 &&
             kdbus_message_get_type(e) == KDBUS_MESSAGE_ERROR &&
             streq(kdbus_message_get_error_name(e), "org.example.Error.Failed") &&
             kdbus_message_get_reply_serial(e, &serial) == 0 && serial == 1 &&
             kdbus_message_read(e, "s", &s) == 0 && streq(s, "it broke") &&
             kdbus_message_new_error(&r, m, "bad", NULL) == -EINVAL &&
             kdbus_message_new_method_return(&r, e) == -EINVAL;
        tap_ok(ok, "api: errors carry name, reply serial and text; replies only to calls");
}

/*
 * Raw message construction for malformed cases: a header with the given
 * fields and a body, bypassing the message API's checks.
 */
struct raw_field {
        uint8_t code;
        char type;
        const char *s;
        uint32_t u;
};

static size_t raw_message(uint8_t *out, size_t max, uint8_t type, uint32_t serial,
                          const struct raw_field *fields, size_t n_fields,
                          const void *body, uint32_t body_len)
{
        struct kdbus_writer w;
        uint8_t y[4] = { 'l', type, 0, 1 };
        size_t i, size = 0;
        int r = 0;

        if (kdbus_writer_init(&w, 'l') < 0)
                return 0;
        for (i = 0; i < 4; ++i)
                r |= kdbus_writer_append_basic(&w, 'y', &y[i]);
        r |= kdbus_writer_append_basic(&w, 'u', &body_len);
        r |= kdbus_writer_append_basic(&w, 'u', &serial);
        r |= kdbus_writer_open(&w, 'a', "(yv)");
        for (i = 0; i < n_fields; ++i) {
                char sig[2] = { fields[i].type, 0 };

                r |= kdbus_writer_open(&w, '(', "yv");
                r |= kdbus_writer_append_basic(&w, 'y', &fields[i].code);
                r |= kdbus_writer_open(&w, 'v', sig);
                if (fields[i].type == 'u')
                        r |= kdbus_writer_append_basic(&w, 'u', &fields[i].u);
                else
                        r |= kdbus_writer_append_basic(&w, fields[i].type, fields[i].s);
                r |= kdbus_writer_close(&w);
                r |= kdbus_writer_close(&w);
        }
        r |= kdbus_writer_close(&w);
        r |= kdbus_writer_pad(&w, 8);
        r |= kdbus_writer_put_raw(&w, body, body_len);
        if (r == 0 && w.size <= max) {
                memcpy(out, w.data, w.size);
                size = w.size;
        }
        kdbus_writer_deinit(&w);
        return size;
}

static int parse_raw(const uint8_t *data, size_t size)
{
        struct kdbus_message *m = NULL;
        int r;

        r = kdbus_message_parse(&m, data, size);
        kdbus_message_unref(m);
        return r;
}

#define F_PATH(p)       { KDBUS_FIELD_PATH, 'o', p, 0 }
#define F_IFACE(i)      { KDBUS_FIELD_INTERFACE, 's', i, 0 }
#define F_MEMBER(mb)    { KDBUS_FIELD_MEMBER, 's', mb, 0 }
#define F_SIG(g)        { KDBUS_FIELD_SIGNATURE, 'g', g, 0 }

static void test_malformed(void)
{
        static const struct raw_field call[] = { F_PATH("/a"), F_MEMBER("M") };
        static const struct raw_field call_sig_u[] = { F_PATH("/a"), F_MEMBER("M"), F_SIG("u") };
        static const struct raw_field call_sig_s[] = { F_PATH("/a"), F_MEMBER("M"), F_SIG("s") };
        static const struct raw_field call_sig_h[] = {
                F_PATH("/a"), F_MEMBER("M"), F_SIG("h"), { KDBUS_FIELD_UNIX_FDS, 'u', NULL, 1 },
        };
        static const struct raw_field call_sig_v[] = { F_PATH("/a"), F_MEMBER("M"), F_SIG("v") };
        static const struct raw_field no_member[] = { F_PATH("/a") };
        static const struct raw_field dup[] = { F_PATH("/a"), F_MEMBER("M"), F_MEMBER("N") };
        static const struct raw_field wrong_type[] = { { KDBUS_FIELD_PATH, 's', "/a", 0 }, F_MEMBER("M") };
        static const struct raw_field code0[] = { F_PATH("/a"), F_MEMBER("M"), { 0, 's', "x", 0 } };
        static const struct raw_field unknown[] = { F_PATH("/a"), { 42, 's', "x", 0 }, F_MEMBER("M") };
        static const struct raw_field bad_iface[] = { F_PATH("/a"), F_IFACE("noDots"), F_MEMBER("M") };
        static const struct raw_field bad_member[] = { F_PATH("/a"), F_MEMBER("a.b") };
        static const struct raw_field bad_dest[] = {
                F_PATH("/a"), F_MEMBER("M"), { KDBUS_FIELD_DESTINATION, 's', "x..y", 0 },
        };
        static const struct raw_field local_path[] = { F_PATH("/org/freedesktop/DBus/Local"), F_MEMBER("M") };
        static const struct raw_field local_iface[] = {
                F_PATH("/a"), F_IFACE("org.freedesktop.DBus.Local"), F_MEMBER("M"),
        };
        static const struct raw_field reply0[] = { { KDBUS_FIELD_REPLY_SERIAL, 'u', NULL, 0 } };
        static const struct raw_field reply1[] = { { KDBUS_FIELD_REPLY_SERIAL, 'u', NULL, 1 } };
        static const struct raw_field err_no_name[] = { { KDBUS_FIELD_REPLY_SERIAL, 'u', NULL, 1 } };
        static const struct raw_field signal_no_iface[] = { F_PATH("/a"), F_MEMBER("M") };
        static const uint8_t body_u[] = { 7, 0, 0, 0 };
        static const uint8_t body_s_bad[] = { 2, 0, 0, 0, 0xc3, 0x28, 0 };
        static const uint8_t body_h[] = { 1, 0, 0, 0 };
        uint8_t deep[4 + 65 * 3], buf[1024], tmp[1024];
        _cleanup_msg_ struct kdbus_message *m = NULL;
        const void *data;
        size_t n, n2, i;
        bool ok;

        n = raw_message(buf, sizeof(buf), 1, 5, call, 2, NULL, 0);
        tap_ok(n > 0 && parse_raw(buf, n) == 0, "malformed: the unmodified base message is valid");

        tap_ok(parse_raw(buf, 15) == -EBADMSG && parse_raw(buf, 0) == -EBADMSG,
               "malformed: fewer than 16 bytes -> EBADMSG");
        tap_ok(parse_raw(buf, n - 1) == -EBADMSG, "malformed: truncated message -> EBADMSG");
        memcpy(tmp, buf, n);
        tmp[n] = 0;
        tap_ok(parse_raw(tmp, n + 1) == -EBADMSG, "malformed: trailing byte -> EBADMSG");

        memcpy(tmp, buf, n);
        tmp[0] = 'x';
        ok = parse_raw(tmp, n) == -EPROTONOSUPPORT;
        tmp[0] = 'l';
        tmp[3] = 2;
        ok &= parse_raw(tmp, n) == -EPROTONOSUPPORT;
        tap_ok(ok, "malformed: unknown endianness or version -> EPROTONOSUPPORT");

        memcpy(tmp, buf, n);
        tmp[1] = 0;
        ok = parse_raw(tmp, n) == -EBADMSG;
        memcpy(tmp, buf, n);
        memset(tmp + 8, 0, 4);
        ok &= parse_raw(tmp, n) == -EBADMSG;
        tap_ok(ok, "malformed: type 0 or serial 0 -> EBADMSG");

        memcpy(tmp, buf, n);
        tmp[4] = 4;     /* body length 4, but no body */
        ok = parse_raw(tmp, n) == -EBADMSG;
        tmp[4] = 0;
        tmp[7] = 0x10;  /* body length 256 MiB */
        ok &= parse_raw(tmp, n) == -EMSGSIZE;
        memcpy(tmp, buf, n);
        tmp[15] = 0x04; /* field array 64 MiB + ... */
        ok &= parse_raw(tmp, n) == -EMSGSIZE;
        tap_ok(ok, "malformed: bad body/field lengths -> EBADMSG, over the limits -> EMSGSIZE");

        memcpy(tmp, buf, n);
        /* fields: path (16..27, padding to 32), member ends at 32+8+2=42, pad to 48 */
        ok = tmp[n - 1] == 0 && tmp[n - 2] == 0;
        tmp[n - 1] = 1;
        ok &= parse_raw(tmp, n) == -EBADMSG;
        tap_ok(ok, "malformed: non-zero header padding -> EBADMSG");

        memcpy(tmp, buf, n);
        tmp[16 + 4] = 1;        /* PATH "/a" claims length 1: no NUL after it */
        ok = parse_raw(tmp, n) == -EBADMSG;
        tmp[16 + 4] = 3;        /* length 3: the NUL is inside */
        ok &= parse_raw(tmp, n) == -EILSEQ;
        tap_ok(ok, "malformed: wrong string length in the header -> EBADMSG / EILSEQ");

        n2 = raw_message(tmp, sizeof(tmp), 1, 5, no_member, 1, NULL, 0);
        ok = parse_raw(tmp, n2) == -EBADMSG;
        n2 = raw_message(tmp, sizeof(tmp), 4, 5, signal_no_iface, 2, NULL, 0);
        ok &= parse_raw(tmp, n2) == -EBADMSG;
        n2 = raw_message(tmp, sizeof(tmp), 3, 5, err_no_name, 1, NULL, 0);
        ok &= parse_raw(tmp, n2) == -EBADMSG;
        n2 = raw_message(tmp, sizeof(tmp), 2, 5, NULL, 0, NULL, 0);
        ok &= parse_raw(tmp, n2) == -EBADMSG;
        n2 = raw_message(tmp, sizeof(tmp), 2, 5, reply1, 1, NULL, 0);
        ok &= parse_raw(tmp, n2) == 0;
        n2 = raw_message(tmp, sizeof(tmp), 9, 5, NULL, 0, NULL, 0);
        ok &= parse_raw(tmp, n2) == 0;
        tap_ok(ok, "malformed: required header fields missing -> EBADMSG; unknown type accepted");

        n2 = raw_message(tmp, sizeof(tmp), 1, 5, dup, 3, NULL, 0);
        ok = parse_raw(tmp, n2) == -EBADMSG;
        n2 = raw_message(tmp, sizeof(tmp), 1, 5, wrong_type, 2, NULL, 0);
        ok &= parse_raw(tmp, n2) == -EBADMSG;
        n2 = raw_message(tmp, sizeof(tmp), 1, 5, code0, 3, NULL, 0);
        ok &= parse_raw(tmp, n2) == -EBADMSG;
        n2 = raw_message(tmp, sizeof(tmp), 2, 5, reply0, 1, NULL, 0);
        ok &= parse_raw(tmp, n2) == -EBADMSG;
        tap_ok(ok, "malformed: duplicate field, wrong field type, code 0, REPLY_SERIAL 0 -> EBADMSG");

        n2 = raw_message(tmp, sizeof(tmp), 1, 5, bad_iface, 3, NULL, 0);
        ok = parse_raw(tmp, n2) == -EBADMSG;
        n2 = raw_message(tmp, sizeof(tmp), 1, 5, bad_member, 2, NULL, 0);
        ok &= parse_raw(tmp, n2) == -EBADMSG;
        n2 = raw_message(tmp, sizeof(tmp), 1, 5, bad_dest, 3, NULL, 0);
        ok &= parse_raw(tmp, n2) == -EBADMSG;
        n2 = raw_message(tmp, sizeof(tmp), 1, 5, local_path, 2, NULL, 0);
        ok &= parse_raw(tmp, n2) == -EBADMSG;
        n2 = raw_message(tmp, sizeof(tmp), 1, 5, local_iface, 3, NULL, 0);
        ok &= parse_raw(tmp, n2) == -EBADMSG;
        tap_ok(ok, "malformed: invalid interface, member, bus name, reserved Local -> EBADMSG");

        n2 = raw_message(tmp, sizeof(tmp), 1, 5, unknown, 3, NULL, 0);
        ok = n2 > 0 && kdbus_message_parse(&m, tmp, n2) == 0 &&
             kdbus_message_get_data(m, &data, &n) == 0 && n == n2 - 16 &&
             kdbus_message_get_fields(m, buf, sizeof(buf)) == 2;
        tap_ok(ok, "malformed: unknown header field accepted and dropped");

        n2 = raw_message(tmp, sizeof(tmp), 1, 5, call, 2, body_u, sizeof(body_u));
        ok = parse_raw(tmp, n2) == -EBADMSG;    /* body without SIGNATURE */
        n2 = raw_message(tmp, sizeof(tmp), 1, 5, call_sig_u, 3, body_u, 3);
        ok &= parse_raw(tmp, n2) == -EBADMSG;   /* body shorter than the signature */
        n2 = raw_message(tmp, sizeof(tmp), 1, 5, call_sig_s, 3, body_s_bad, sizeof(body_s_bad));
        ok &= parse_raw(tmp, n2) == -EILSEQ;
        n2 = raw_message(tmp, sizeof(tmp), 1, 5, call_sig_h, 4, body_h, sizeof(body_h));
        ok &= parse_raw(tmp, n2) == -EBADMSG;   /* index 1 with UNIX_FDS 1 */
        tap_ok(ok, "malformed: body without signature, short body, bad UTF-8, fd index");

        /* 65 nested variants in the body */
        for (i = 0; i < 65; ++i) {
                deep[3 * i] = 1;
                deep[3 * i + 1] = 'v';
                deep[3 * i + 2] = 0;
        }
        deep[3 * 64 + 1] = 'y';
        deep[3 * 65] = 1;
        n2 = raw_message(tmp, sizeof(tmp), 1, 5, call_sig_v, 3, deep, 3 * 65 + 1);
        ok = parse_raw(tmp, n2) == -ELOOP;
        n2 = raw_message(tmp, sizeof(tmp), 1, 5, call_sig_v, 3, deep + 3, 3 * 64 + 1);
        ok &= parse_raw(tmp, n2) == 0;
        tap_ok(ok, "malformed: 65 nested variants -> ELOOP, 64 accepted");

        /* flip every byte of a valid message: never a crash, never a wrong accept of length */
        {
                _cleanup_msg_ struct kdbus_message *v = NULL;
                size_t j, accepted = 0;

                ok = build_everything(&v, 0) == 0 && kdbus_message_get_data(v, &data, &n) == 0 &&
                     n <= sizeof(tmp);
                for (j = 0; ok && j < n; ++j) {
                        struct kdbus_message *p = NULL;

                        memcpy(tmp, data, n);
                        tmp[j] ^= 0x5a;
                        if (kdbus_message_parse(&p, tmp, n) == 0)
                                ++accepted;
                        kdbus_message_unref(p);
                }
                tap_diag("%zu of %zu single-byte corruptions still parse", accepted, n);
                tap_ok(ok && accepted < n, "malformed: byte corruptions of a full message never crash");
        }
}

/*
 * Every string header field is a name, and the fast header parser lets
 * the name check stand for the UTF-8 check: a name field that is valid
 * UTF-8 but not ASCII, invalid UTF-8, or holds a NUL must be refused in
 * each of the five, while the same message with an ASCII name parses.
 */
static void test_name_fields(void)
{
        static const uint8_t codes[] = { KDBUS_FIELD_INTERFACE, KDBUS_FIELD_MEMBER,
                                         KDBUS_FIELD_ERROR_NAME, KDBUS_FIELD_DESTINATION,
                                         KDBUS_FIELD_SENDER };
        /* [0] is valid; 'Z' becomes a NUL in the bytes */
        static const char *const dotted[] = { "org.ab.x", "org.\xc3\xa9.x", "org.\xc3(.x", "org.aZ.x" };
        static const char *const member[] = { "Mab", "M\xc3\xa9", "M\xc3(", "MaZ" };
        unsigned int bad = 0;
        uint8_t buf[512];

        for (size_t c = 0; c < sizeof(codes); ++c) {
                for (size_t v = 0; v < 4; ++v) {
                        bool is_member = codes[c] == KDBUS_FIELD_MEMBER;
                        bool is_error = codes[c] == KDBUS_FIELD_ERROR_NAME;
                        struct raw_field f[4] = {
                                F_PATH("/a"), F_MEMBER("M"),
                                { codes[c], 's', is_member ? member[v] : dotted[v], 0 },
                        };
                        struct raw_field e[2] = {
                                { KDBUS_FIELD_REPLY_SERIAL, 'u', NULL, 1 },
                                { KDBUS_FIELD_ERROR_NAME, 's', dotted[v], 0 },
                        };
                        size_t n;
                        uint8_t *z;
                        int r;

                        if (is_member)
                                f[1] = f[2];
                        if (is_error)
                                n = raw_message(buf, sizeof(buf), KDBUS_MESSAGE_ERROR, 5, e, 2, NULL, 0);
                        else
                                n = raw_message(buf, sizeof(buf), KDBUS_MESSAGE_METHOD_CALL, 5, f,
                                                is_member ? 2 : 3, NULL, 0);
                        z = n ? memchr(buf, 'Z', n) : NULL;
                        if (z)
                                *z = 0;
                        r = n ? parse_raw(buf, n) : -EIO;
                        bad += v == 0 ? r != 0 : r >= 0;
                }
        }
        tap_ok(bad == 0, "malformed: non-ASCII, invalid UTF-8 and NUL refused in each name field (%u wrong)",
               bad);
}

/*
 * A constructor's strings and a small body live inside the message object
 * until sealing; long ones are allocated. Both kinds must read back the
 * same before sealing, after sealing and after a parse of the bytes.
 */
static void test_inline_storage(void)
{
        char iface[200], text[300];
        unsigned int bad = 0;

        memset(iface, 'a', sizeof(iface));
        iface[1] = '.';
        iface[sizeof(iface) - 1] = 0;
        memset(text, 'x', sizeof(text));
        text[sizeof(text) - 1] = 0;
        for (int big = 0; big < 2; ++big) {
                const char *in = big ? iface : "org.example.I", *body = big ? text : "hi";
                _cleanup_msg_ struct kdbus_message *m = NULL, *p = NULL, *r = NULL;
                const void *data;
                const char *s = NULL;
                size_t n;

                bad += kdbus_message_new_method_call(&m, "org.example.D", "/p", in, "M") != 0;
                if (!m)
                        continue;
                bad += kdbus_message_append(m, "ss", body, body) != 0;
                bad += !streq(kdbus_message_get_interface(m), in) ||
                       !streq(kdbus_message_get_destination(m), "org.example.D");
                bad += kdbus_message_seal(m, 3, ":1.7") != 0;
                bad += !streq(kdbus_message_get_interface(m), in) ||
                       !streq(kdbus_message_get_path(m), "/p") ||
                       !streq(kdbus_message_get_member(m), "M");
                bad += kdbus_message_read(m, "s", &s) != 0 || !streq(s, body);
                bad += kdbus_message_get_data(m, &data, &n) != 0 ||
                       kdbus_message_parse(&p, data, n) != 0;
                if (!p)
                        continue;
                bad += !streq(kdbus_message_get_interface(p), in) ||
                       !streq(kdbus_message_get_sender(p), ":1.7");
                bad += kdbus_message_new_method_return(&r, p) != 0;
                if (!r)
                        continue;
                bad += kdbus_message_append(r, "s", body) != 0 || kdbus_message_seal(r, 4, NULL) != 0;
                bad += !streq(kdbus_message_get_destination(r), ":1.7") ||
                       kdbus_message_read(r, "s", &s) != 0 || !streq(s, body);
        }
        tap_ok(bad == 0, "api: strings and bodies inside the message object or allocated read back the same (%u wrong)",
               bad);
}

/*
 * The per-connection cache of names that passed their checks
 * (message_parse_cached(), message_new_method_call_borrowed()): only the
 * exact bytes of a kept name are taken on trust, bus names and interface
 * names are kept apart, unique names are not kept, and the reserved Local
 * interface never passes.
 */
static void test_name_cache(void)
{
        static const struct raw_field dest_ok[] = {
                F_PATH("/a"), F_MEMBER("M"), { KDBUS_FIELD_DESTINATION, 's', "org.a.b", 0 },
        };
        static const struct raw_field dest_unique[] = {
                F_PATH("/a"), F_MEMBER("M"), { KDBUS_FIELD_DESTINATION, 's', ":1.5", 0 },
        };
        static const struct raw_field iface_dash[] = { F_PATH("/a"), F_IFACE("a.b-c"), F_MEMBER("M") };
        static const struct raw_field iface_local[] = {
                F_PATH("/a"), F_IFACE("org.freedesktop.DBus.Local"), F_MEMBER("M"),
        };
        static const char *const near[] = { "x..yz", "x..Y", "x..", "x.y" };
        struct message_name_cache cache = { 0 };
        struct kdbus_message *m = NULL;
        unsigned int bad = 0;
        uint8_t buf[512];
        size_t n;

        n = raw_message(buf, sizeof(buf), 1, 5, dest_ok, 3, NULL, 0);
        bad += message_parse_cached(&m, buf, n, &cache) != 0;
        m = kdbus_message_unref(m);
        bad += cache.bus_name_len != 7 || strcmp(cache.bus_name, "org.a.b") != 0;
        n = raw_message(buf, sizeof(buf), 1, 5, dest_unique, 3, NULL, 0);
        bad += message_parse_cached(&m, buf, n, &cache) != 0;
        m = kdbus_message_unref(m);
        bad += strcmp(cache.bus_name, "org.a.b") != 0;          /* unique: not kept */

        /* a bus name kept is no interface name */
        strcpy(cache.bus_name, "a.b-c");
        cache.bus_name_len = 5;
        n = raw_message(buf, sizeof(buf), 1, 5, iface_dash, 3, NULL, 0);
        bad += message_parse_cached(&m, buf, n, &cache) != -EBADMSG;
        n = raw_message(buf, sizeof(buf), 1, 5, iface_local, 3, NULL, 0);
        bad += message_parse_cached(&m, buf, n, &cache) != -EBADMSG;

        /* exact bytes only: an entry (here an invalid one) grants nothing to its neighbours */
        strcpy(cache.bus_name, "x..y");
        cache.bus_name_len = 4;
        for (size_t i = 0; i < 4; ++i) {
                struct raw_field f[3] = {
                        F_PATH("/a"), F_MEMBER("M"), { KDBUS_FIELD_DESTINATION, 's', near[i], 0 },
                };

                n = raw_message(buf, sizeof(buf), 1, 5, f, 3, NULL, 0);
                bad += message_parse_cached(&m, buf, n, &cache) != (i == 3 ? 0 : -EBADMSG);
                m = kdbus_message_unref(m);
        }
        bad += strcmp(cache.bus_name, "x.y") != 0;

        /* construction: the same rules, and what passed is kept */
        bad += message_new_method_call_borrowed(&m, "org.c.d", "/p", "org.e.F", "M", &cache) != 0;
        m = kdbus_message_unref(m);
        bad += strcmp(cache.bus_name, "org.c.d") != 0 || strcmp(cache.interface, "org.e.F") != 0;
        bad += message_new_method_call_borrowed(&m, "org.c.d", "/p", "org.e.F", "M", &cache) != 0;
        m = kdbus_message_unref(m);
        bad += message_new_method_call_borrowed(&m, "org..d", "/p", "org.e.F", "M", &cache) != -EINVAL;
        bad += message_new_method_call_borrowed(&m, "org.c.d", "/p", "org.e.F.", "M", &cache) != -EINVAL;
        bad += message_new_method_call_borrowed(&m, "org.c.d", "/p", "org.freedesktop.DBus.Local",
                                                "M", &cache) != -EINVAL;
        bad += message_new_method_call_borrowed(&m, "org.c.d", "/p", "org.e.F", "1M", &cache) != -EINVAL;
        bad += strcmp(cache.interface, "org.e.F") != 0;

        /* known unique names: the exact bytes pass, nothing else does */
        {
                static const char *const senders[] = { ":1.5", ":1.50", "::1.5", ":1.", ":1.5." };
                struct message_known_names known = { { ":1.5", NULL }, { 4, 0 } };

                for (size_t i = 0; i < 5; ++i) {
                        struct raw_field f[3] = {
                                F_PATH("/a"), F_MEMBER("M"),
                                { KDBUS_FIELD_SENDER, 's', senders[i], 0 },
                        };

                        n = raw_message(buf, sizeof(buf), 1, 5, f, 3, NULL, 0);
                        /* ":1.50" is valid by its own check */
                        bad += message_parse_received(&m, buf, n, NULL, &known, NULL) !=
                               (i < 2 ? 0 : -EBADMSG);
                        m = kdbus_message_unref(m);
                }
        }

        /* borrowed strings: sealing copies them into the message's bytes */
        {
                char dest[] = "org.c.d", path[] = "/p", iface[] = "org.e.F", member[] = "M";
                struct kdbus_message *reply = NULL;

                bad += message_new_method_call_borrowed(&m, dest, path, iface, member, NULL) != 0;
                bad += kdbus_message_get_destination(m) != dest;
                bad += kdbus_message_seal(m, 3, ":1.5") != 0;
                memset(dest, 'x', 7);
                memset(path, 'x', 2);
                memset(iface, 'x', 7);
                memset(member, 'x', 1);
                bad += strcmp(kdbus_message_get_destination(m), "org.c.d") != 0 ||
                       strcmp(kdbus_message_get_path(m), "/p") != 0 ||
                       strcmp(kdbus_message_get_interface(m), "org.e.F") != 0 ||
                       strcmp(kdbus_message_get_member(m), "M") != 0;
                bad += message_new_method_return_borrowed(&reply, m, NULL) != 0;
                bad += kdbus_message_get_destination(reply) != kdbus_message_get_sender(m);
                bad += kdbus_message_seal(reply, 4, NULL) != 0;
                bad += kdbus_message_get_destination(reply) == kdbus_message_get_sender(m) ||
                       strcmp(kdbus_message_get_destination(reply), ":1.5") != 0;
                m = kdbus_message_unref(m);
                bad += strcmp(kdbus_message_get_destination(reply), ":1.5") != 0;
                kdbus_message_unref(reply);
        }
        tap_ok(bad == 0, "names: a connection's cache of checked names trusts exact bytes only, "
               "borrowed strings are copied at sealing (%u wrong)", bad);
}

static bool same_string(const char *a, const char *b)
{
        return (!a && !b) || streq(a, b);
}

/* the header two parses gave: type, flags, serial, every field, their order */
static bool same_header(const struct kdbus_message *a, const struct kdbus_message *b)
{
        uint8_t ca[16], cb[16];
        uint32_t ra = 0, rb = 0;
        size_t na, nb;

        na = kdbus_message_get_fields(a, ca, sizeof(ca));
        nb = kdbus_message_get_fields(b, cb, sizeof(cb));
        return kdbus_message_get_type(a) == kdbus_message_get_type(b) &&
               kdbus_message_get_flags(a) == kdbus_message_get_flags(b) &&
               kdbus_message_get_serial(a) == kdbus_message_get_serial(b) &&
               na == nb && !memcmp(ca, cb, na) &&
               kdbus_message_get_reply_serial(a, &ra) == kdbus_message_get_reply_serial(b, &rb) &&
               ra == rb && kdbus_message_get_unix_fds(a) == kdbus_message_get_unix_fds(b) &&
               same_string(kdbus_message_get_path(a), kdbus_message_get_path(b)) &&
               same_string(kdbus_message_get_interface(a), kdbus_message_get_interface(b)) &&
               same_string(kdbus_message_get_member(a), kdbus_message_get_member(b)) &&
               same_string(kdbus_message_get_error_name(a), kdbus_message_get_error_name(b)) &&
               same_string(kdbus_message_get_destination(a), kdbus_message_get_destination(b)) &&
               same_string(kdbus_message_get_sender(a), kdbus_message_get_sender(b)) &&
               streq(kdbus_message_get_signature(a), kdbus_message_get_signature(b));
}

/*
 * One corrupted header parsed with a cache that kept @base's fields (the
 * hit path when only number values differ) and without any cache must
 * give the same result, and the same fields when both accept.
 */
static unsigned int fields_cache_differs(const uint8_t *base, const uint8_t *data, size_t n)
{
        struct message_name_cache cache = { 0 };
        struct kdbus_message *a = NULL, *b = NULL;
        unsigned int bad = 0;
        int ra, rb;

        bad += message_parse_cached(&a, base, n, &cache) != 0 || cache.fields.len == 0;
        a = kdbus_message_unref(a);
        ra = message_parse_cached(&a, data, n, &cache);
        rb = kdbus_message_parse(&b, data, n);
        bad += ra != rb || (ra == 0 && !same_header(a, b));
        kdbus_message_unref(a);
        kdbus_message_unref(b);
        return bad;
}

/*
 * The fields array of the last header the fast parser took whole is kept
 * by the connection (struct message_fields_cache): a header of the same
 * bytes, but for its number values, is taken by comparison. Every
 * single-byte change of the header of a call, a reply, an error and a
 * message with descriptors, in both byte orders, must be judged as
 * without the cache; and an entry is trusted for its exact bytes only.
 */
static void test_fields_cache(void)
{
        static const struct raw_field fds[] = {
                F_PATH("/a"), F_MEMBER("M"), F_SIG("h"), { KDBUS_FIELD_UNIX_FDS, 'u', NULL, 1 },
        };
        static const uint8_t body_h[] = { 0, 0, 0, 0 };
        static const uint8_t flips[] = { 0x01, 0x20, 0x5a, 0x80, 0xff };
        struct kdbus_message *v[8] = { NULL };
        struct message_name_cache cache = { 0 };
        unsigned int bad = 0, hits = 0;
        size_t n_v = 0, n;
        uint8_t buf[1024], tmp[1024];
        const void *data;

        bad += kdbus_message_new_method_call(&v[0], "org.kdbus.Bench", "/b", "org.kdbus.Bench",
                                             "Echo") != 0;
        bad += kdbus_message_append(v[0], "s", "8 bytes!") != 0 || kdbus_message_seal(v[0], 9, ":1.7") != 0;
        bad += kdbus_message_new_method_return(&v[1], v[0]) != 0;
        bad += kdbus_message_append(v[1], "s", "8 bytes!") != 0 ||
               kdbus_message_seal(v[1], 10, ":1.12") != 0;
        bad += kdbus_message_new_error(&v[2], v[0], "org.kdbus.Error.Bad", "no") != 0 ||
               kdbus_message_seal(v[2], 11, ":1.12") != 0;
        n = raw_message(buf, sizeof(buf), KDBUS_MESSAGE_METHOD_CALL, 5, fds, 4, body_h, 4);
        bad += n == 0 || kdbus_message_parse(&v[3], buf, n) != 0;
        n_v = 4;
        for (size_t i = 0; i < 4 && !bad; ++i)
                bad += kdbus_message_convert(&v[n_v++], v[i], KDBUS_BIG_ENDIAN) != 0;

        for (size_t i = 0; i < n_v && !bad; ++i) {
                size_t body_offset, j;

                bad += kdbus_message_get_data(v[i], &data, &n) != 0 || n > sizeof(tmp);
                if (bad)
                        break;
                memcpy(buf, data, n);
                body_offset = n - (kdbus_message_get_body(v[i], &data, &j) == 0 ? j : 0);
                /* the same bytes, then each byte of the header changed */
                bad += fields_cache_differs(buf, buf, n);
                for (j = 0; j < body_offset; ++j) {
                        for (size_t k = 0; k < sizeof(flips); ++k) {
                                memcpy(tmp, buf, n);
                                tmp[j] ^= flips[k];
                                bad += fields_cache_differs(buf, tmp, n);
                        }
                        memcpy(tmp, buf, n);
                        tmp[j] = 0;
                        bad += fields_cache_differs(buf, tmp, n);
                }
        }

        /*
         * An entry grants its exact bytes only: a kept "Mb" made "1b" by
         * hand passes "1b" (so the comparison is what decides), "Mc" is
         * checked and replaces it, and then "1b" is refused again.
         */
        {
                static const char *const members[] = { "Mb", "1b", "Mc", "1b" };
                static const int want[] = { 0, 0, 0, -EBADMSG };
                struct kdbus_message *m = NULL;
                uint8_t *p;

                for (size_t i = 0; i < 4; ++i) {
                        struct raw_field f[2] = { F_PATH("/a"), F_MEMBER(members[i]) };
                        int r;

                        n = raw_message(buf, sizeof(buf), KDBUS_MESSAGE_METHOD_CALL, 5, f, 2, NULL, 0);
                        r = message_parse_cached(&m, buf, n, &cache);
                        bad += r != want[i];
                        hits += r == 0 && i == 1 && streq(kdbus_message_get_member(m), "1b");
                        m = kdbus_message_unref(m);
                        if (i == 0) {
                                p = memmem(cache.fields.bytes, cache.fields.len, "Mb", 2);
                                bad += !p;
                                if (p)
                                        p[0] = '1';
                        }
                }
                bad += parse_raw(buf, n) != -EBADMSG;
        }
        for (size_t i = 0; i < n_v; ++i)
                kdbus_message_unref(v[i]);
        tap_ok(bad == 0 && hits == 1,
               "fields cache: every changed header byte judged as without it, exact bytes only (%u wrong)",
               bad);
}

/*
 * The objects of messages a connection drops are kept for its next ones
 * (message_unref_keep()): a message parsed or made on a kept object reads
 * back as one on a new object, at most MESSAGE_SPARES are kept, and
 * message_cache_release() frees them (the sanitizer sees no leak).
 */
static void test_spares(void)
{
        struct message_name_cache cache = { 0 };
        struct kdbus_message *v = NULL, *p = NULL, *q = NULL, *m[MESSAGE_SPARES + 1] = { NULL };
        unsigned int bad = 0;
        const void *data, *d2;
        const char *s = NULL;
        size_t n, n2;

        bad += kdbus_message_new_method_call(&v, "org.a.B", "/p", "org.a.I", "M") != 0;
        bad += kdbus_message_append(v, "su", "text", 5) != 0 || kdbus_message_seal(v, 3, ":1.4") != 0;
        bad += kdbus_message_get_data(v, &data, &n) != 0;
        for (size_t i = 0; i < 2 && !bad; ++i) {
                struct kdbus_message *old;

                bad += message_parse_cached(&p, data, n, &cache) != 0;
                old = p;
                message_unref_keep(p, &cache);
                bad += cache.n_spares != 1;
                /* parsed on the kept object, then a call made on it */
                bad += message_parse_cached(&p, data, n, &cache) != 0 || p != old ||
                       kdbus_message_parse(&q, data, n) != 0 || !same_header(p, q);
                bad += kdbus_message_read(p, "s", &s) != 0 || !streq(s, "text");
                q = kdbus_message_unref(q);
                message_unref_keep(p, &cache);
                bad += message_new_method_call_borrowed(&p, "org.a.B", "/p", "org.a.I", "M", &cache) != 0 ||
                       p != old;
                bad += kdbus_message_append(p, "su", "text", 5) != 0 || kdbus_message_seal(p, 3, ":1.4") != 0;
                bad += kdbus_message_get_data(p, &d2, &n2) != 0 || n2 != n || memcmp(d2, data, n);
                /* a reply on it */
                message_unref_keep(p, &cache);
                bad += message_new_method_return_borrowed(&p, v, &cache) != 0 || p != old;
                bad += kdbus_message_seal(p, 4, NULL) != 0 || !streq(kdbus_message_get_destination(p), ":1.4");
                message_unref_keep(p, &cache);
        }
        /* no more than MESSAGE_SPARES kept; a message with references left is not kept */
        for (size_t i = 0; i <= MESSAGE_SPARES && !bad; ++i)
                bad += message_parse_cached(&m[i], data, n, &cache) != 0;
        kdbus_message_ref(m[0]);
        message_unref_keep(m[0], &cache);
        bad += cache.n_spares != 0;
        for (size_t i = 0; i <= MESSAGE_SPARES; ++i)
                message_unref_keep(m[i], &cache);
        bad += cache.n_spares != MESSAGE_SPARES;
        message_cache_release(&cache);
        bad += cache.n_spares != 0;
        kdbus_message_unref(v);
        tap_ok(bad == 0, "spares: messages on a connection's kept objects read back as on new ones (%u wrong)",
               bad);
}

/*
 * kdbus_message_unref() keeps the dropped object for the thread's next
 * message (a client's replies, which the application drops): messages
 * made and parsed on it read back as on new ones, a kept object is taken
 * once, and the thread's exit frees it (LeakSanitizer reports it if not).
 * In a thread of its own: a fresh thread keeps nothing yet.
 */
static void *thread_spare_run(void *arg)
{
        unsigned int *bad = arg;
        struct kdbus_message *v = NULL, *ref = NULL, *p = NULL, *q = NULL, *r = NULL, *old;
        struct message_name_cache cache = { 0 };
        const void *data, *d2;
        const char *s = NULL;
        size_t n, n2;
        uint32_t u = 0;
        int pipefd[2];

        *bad += message_thread_spare_held();
        /* the reference, made on new memory */
        *bad += kdbus_message_new_method_call(&ref, "org.a.B", "/p", "org.a.I", "M") != 0;
        *bad += kdbus_message_append(ref, "su", "text", 5) != 0 || kdbus_message_seal(ref, 3, ":1.4") != 0;
        *bad += kdbus_message_get_data(ref, &data, &n) != 0;
        *bad += message_thread_spare_held();

        /* a message with everything a release must undo: fds, own strings, a big body, a reader */
        *bad += pipe2(pipefd, O_CLOEXEC) != 0;
        *bad += kdbus_message_new_signal(&v, "/q/r", "org.x.Y", "Sig") != 0;
        *bad += kdbus_message_append(v, "hs", pipefd[0], "a string long enough to need its own memory, "
                                     "which is longer than the object's tail of some hundred bytes, "
                                     "so this goes on for a while: the quick brown fox jumps over the "
                                     "lazy dog, the quick brown fox jumps over the lazy dog, the quick "
                                     "brown fox jumps over the lazy dog, and over it again and again") != 0;
        close(pipefd[0]);
        close(pipefd[1]);
        *bad += kdbus_message_set_destination(v, ":1.77") != 0;
        *bad += kdbus_message_seal(v, 9, ":1.8") != 0 || kdbus_message_set_sender(v, ":1.99") != 0;
        *bad += kdbus_message_read(v, "h", &(int){ -1 }) != 0;
        old = v;
        kdbus_message_unref(v);
        *bad += !message_thread_spare_held();
#if defined(__SANITIZE_ADDRESS__)
        *bad += !__asan_address_is_poisoned(old);
#endif
        /* a call made on it: taken once (q is new memory), bytes as the reference's */
        *bad += kdbus_message_new_method_call(&p, "org.a.B", "/p", "org.a.I", "M") != 0 || p != old;
        *bad += message_thread_spare_held();
        *bad += kdbus_message_new_method_call(&q, "org.a.B", "/p", "org.a.I", "M") != 0 || q == old;
        *bad += kdbus_message_get_sender(p) != NULL || kdbus_message_get_unix_fds(p) != 0 ||
                kdbus_message_get_reply_serial(p, &u) >= 0 || kdbus_message_get_error_name(p) != NULL;
        *bad += kdbus_message_append(p, "su", "text", 5) != 0 || kdbus_message_seal(p, 3, ":1.4") != 0;
        *bad += kdbus_message_get_data(p, &d2, &n2) != 0 || n2 != n || memcmp(d2, data, n);
        kdbus_message_unref(q);         /* kept: the spare is empty */
        kdbus_message_unref(p);         /* freed: the spare is q's */
        *bad += !message_thread_spare_held();
        /* parsed on it, with and without a connection's cache */
        *bad += kdbus_message_parse(&p, data, n) != 0 || p != q || !same_header(p, ref);
        *bad += kdbus_message_read(p, "su", &s, &u) != 0 || !streq(s, "text") || u != 5;
        kdbus_message_unref(p);
        *bad += message_parse_cached(&r, data, n, &cache) != 0 || r != q || !same_header(r, ref);
        *bad += kdbus_message_read(r, "s", &s) != 0 || !streq(s, "text");
        /* a connection's spares take theirs first; past MESSAGE_SPARES the thread keeps one */
        message_unref_keep(r, &cache);
        *bad += cache.n_spares != 1 || message_thread_spare_held();
        *bad += kdbus_message_new_method_return(&p, ref) != 0 || message_thread_spare_held() ||
                cache.n_spares != 1;
        *bad += kdbus_message_seal(p, 4, NULL) != 0 || !streq(kdbus_message_get_destination(p), ":1.4");
        for (size_t i = 0; i < MESSAGE_SPARES && !*bad; ++i) {
                *bad += kdbus_message_parse(&q, data, n) != 0;
                message_unref_keep(q, &cache);
        }
        message_unref_keep(p, &cache);
        *bad += cache.n_spares != MESSAGE_SPARES || !message_thread_spare_held();
        message_cache_release(&cache);
        kdbus_message_unref(ref);
        /* left held: the thread's exit frees it */
        *bad += !message_thread_spare_held();
        return NULL;
}

static void test_thread_spare(void)
{
        unsigned int bad = 0;
        pthread_t t;

        bad += pthread_create(&t, NULL, thread_spare_run, &bad) != 0 || pthread_join(t, NULL) != 0;
        tap_ok(bad == 0, "thread spare: messages on the object the thread dropped last read back as on "
               "new ones, taken once (%u wrong)", bad);
}

/*
 * A connection's calls (message_new_method_call_borrowed() with a cache,
 * sealed by message_seal_own()) equal to the last one made are sealed from
 * its kept header: every call in a sequence of variants (each name, the
 * signature, the sender, the flags, descriptors, a header too long to keep,
 * a destination set after construction) comes out byte for byte as made
 * without the cache, the template changes only when a call differs, and a
 * name differing from the template's is checked as without it.
 */
struct call_variant {
        const char *dest, *path, *iface, *member, *sender;
        int body;               /* 0: "su", 1: "s", 2: none, 3: "h", 4: "us" */
        int flags;              /* -1: as made */
        const char *set_dest;   /* set after construction */
};

/*
 * What the template tests do to a new message @m before it is *@ret: a
 * body, the flags, a destination set after construction, sealing (as a
 * connection does with @own).
 */
static int variant_finish(struct kdbus_message *m, int body, int flags, const char *set_dest,
                          bool own, const char *sender, uint32_t serial, int fd,
                          struct kdbus_message **ret)
{
        int r = 0;

        if (body == 0)
                r = kdbus_message_append(m, "su", "text", serial);
        else if (body == 1)
                r = kdbus_message_append(m, "s", "other");
        else if (body == 3)
                r = kdbus_message_append(m, "h", fd);
        else if (body == 4)
                r = kdbus_message_append(m, "us", serial, "text");
        if (r >= 0 && flags >= 0)
                r = kdbus_message_set_flags(m, (uint8_t)flags);
        if (r >= 0 && set_dest)
                r = kdbus_message_set_destination(m, set_dest);
        if (r >= 0)
                r = own && sender ? message_seal_own(m, serial, sender, strlen(sender))
                                  : kdbus_message_seal(m, serial, sender);
        if (r < 0) {
                kdbus_message_unref(m);
                return r;
        }
        *ret = m;
        return 0;
}

static bool same_strings(const char *a, const char *b)
{
        return (!a && !b) || streq(a, b);
}

/* @m has the bytes and the header's strings of @ref */
static bool same_message(const struct kdbus_message *m, const struct kdbus_message *ref)
{
        const void *d1, *d2;
        size_t n1, n2;

        return kdbus_message_get_data(m, &d1, &n1) == 0 && kdbus_message_get_data(ref, &d2, &n2) == 0 &&
               n1 == n2 && memcmp(d1, d2, n1) == 0 &&
               same_strings(kdbus_message_get_destination(m), kdbus_message_get_destination(ref)) &&
               same_strings(kdbus_message_get_path(m), kdbus_message_get_path(ref)) &&
               same_strings(kdbus_message_get_interface(m), kdbus_message_get_interface(ref)) &&
               same_strings(kdbus_message_get_member(m), kdbus_message_get_member(ref)) &&
               same_strings(kdbus_message_get_sender(m), kdbus_message_get_sender(ref)) &&
               same_strings(kdbus_message_get_signature(m), kdbus_message_get_signature(ref));
}

static int call_variant_make(const struct call_variant *v, struct message_name_cache *cache,
                             uint32_t serial, int fd, struct kdbus_message **ret)
{
        struct kdbus_message *m = NULL;
        int r;

        r = cache ? message_new_method_call_borrowed(&m, v->dest, v->path, v->iface, v->member, cache)
                  : kdbus_message_new_method_call(&m, v->dest, v->path, v->iface, v->member);
        if (r < 0)
                return r;
        return variant_finish(m, v->body, v->flags, v->set_dest, cache, v->sender, serial, fd, ret);
}

static void test_call_template(void)
{
        static char long_path[701];     /* "/a/a.../a": a header longer than a template keeps */
        const struct call_variant v[] = {
                { "org.a.B", "/p", "org.a.I", "M", ":1.4", 0, 0, NULL },
                { "org.a.B", "/p", "org.a.I", "M", ":1.4", 1, 0, NULL },
                { "org.a.B", "/p", "org.a.I", "M", ":1.4", 4, 0, NULL },
                { "org.a.B", "/p", "org.a.I", "M", ":1.5", 0, 0, NULL },
                { "org.a.C", "/p", "org.a.I", "M", ":1.4", 0, 0, NULL },
                { NULL, "/p", "org.a.I", "M", ":1.4", 0, 0, NULL },
                { "org.a.B", "/p", NULL, "M", ":1.4", 0, 0, NULL },
                { "org.a.B", "/q", "org.a.I", "N", ":1.4", 0, 0, NULL },
                { "org.a.B", "/p", "org.a.J", "M", ":1.4", 0, 0, NULL },
                { "org.a.B", "/p", "org.a.I", "M", ":1.4", 0, KDBUS_MESSAGE_NO_AUTO_START, NULL },
                { "org.a.B", "/p", "org.a.I", "M", ":1.4", 2, 0, NULL },
                { "org.a.B", "/p", "org.a.I", "M", ":1.4", 3, 0, NULL },
                { "org.a.B", "/p", "org.a.I", "M", ":1.4", 0, 0, ":1.9" },
                { "org.a.B", "/p", "org.a.I", "M", NULL, 0, 0, NULL },
                { "org.a.B", long_path, "org.a.I", "M", ":1.4", 0, 0, NULL },
                { ":1.33", "/p", "org.a.I", "M", ":1.4", 0, 0, NULL },
        };
        const size_t n_v = sizeof(v) / sizeof(v[0]);
        struct message_name_cache cache = { 0 };
        unsigned int bad = 0, hits = 0, kept = 0;
        uint32_t serial = 1;
        struct kdbus_message *m = NULL;
        int pipefd[2];

        for (size_t i = 0; i + 1 < sizeof(long_path); ++i)
                long_path[i] = i % 2 ? 'a' : '/';
        long_path[sizeof(long_path) - 1] = 0;
        bad += pipe2(pipefd, O_CLOEXEC) != 0;
        /* each variant after each other one, twice in a row */
        for (size_t a = 0; a < n_v; ++a) {
                for (size_t b = 0; b < n_v; ++b) {
                        const size_t seq[] = { a, a, b, b };

                        for (size_t k = 0; k < 4; ++k) {
                                struct kdbus_message *ref = NULL;
                                const struct call_variant *c = &v[seq[k]];
                                const void *d1 = NULL;
                                size_t n1 = 0;
                                uint32_t gen = cache.call.gen;

                                ++serial;
                                if (call_variant_make(c, &cache, serial, pipefd[0], &m) != 0 ||
                                    call_variant_make(c, NULL, serial, pipefd[0], &ref) != 0) {
                                        ++bad;
                                        kdbus_message_unref(m);
                                        m = NULL;
                                        continue;
                                }
                                hits += cache.call.gen == gen;
                                kept += cache.call.gen != gen && cache.call.len;
                                bad += !same_message(m, ref) || kdbus_message_get_data(m, &d1, &n1) != 0;
                                /* its own bytes, not the template's */
                                bad += n1 && (const uint8_t *)d1 >= cache.call.bytes &&
                                       (const uint8_t *)d1 < cache.call.bytes + sizeof(cache.call.bytes);
                                message_unref_keep(m, &cache);
                                m = NULL;
                                kdbus_message_unref(ref);
                        }
                }
        }
        /* the template's names, one changed to an invalid one, are checked */
        bad += call_variant_make(&v[0], &cache, ++serial, -1, &m) != 0;
        message_unref_keep(m, &cache);
        m = NULL;
        bad += message_new_method_call_borrowed(&m, "org..B", "/p", "org.a.I", "M", &cache) != -EINVAL;
        bad += message_new_method_call_borrowed(&m, "org.a.B", "/p/", "org.a.I", "M", &cache) != -EINVAL;
        bad += message_new_method_call_borrowed(&m, "org.a.B", "/p", "org.a.I.", "M", &cache) != -EINVAL;
        bad += message_new_method_call_borrowed(&m, "org.a.B", "/p", "org.a.I", "M.", &cache) != -EINVAL;
        bad += message_new_method_call_borrowed(&m, "org.a.B", "/org/freedesktop/DBus/Local", "org.a.I", "M",
                                                &cache) != -EINVAL;
        bad += m != NULL;
        close(pipefd[0]);
        close(pipefd[1]);
        message_cache_release(&cache);
        /* most calls repeat the one before: they came from the template */
        bad += hits < n_v * n_v || kept < n_v;
        tap_ok(bad == 0, "call template: calls sealed from the last one's header are byte for byte as "
               "without it (%u from it, %u kept, %u wrong)", hits, kept, bad);
}

/*
 * The same for replies (message_new_method_return_borrowed() with a cache):
 * a reply equal to the last one but for its REPLY_SERIAL is sealed from
 * its header, byte for byte as without the cache.
 */
struct reply_variant {
        size_t call;            /* index of the call answered */
        const char *sender;
        int body;               /* 0: "su", 1: "s", 2: none, 3: "h", 4: "us" */
        int flags;              /* -1: as made */
        const char *set_dest;
};

static int reply_variant_make(const struct reply_variant *v, struct kdbus_message *call,
                              struct message_name_cache *cache, uint32_t serial, int fd,
                              struct kdbus_message **ret)
{
        struct kdbus_message *m = NULL;
        int r;

        r = cache ? message_new_method_return_borrowed(&m, call, cache)
                  : kdbus_message_new_method_return(&m, call);
        if (r < 0)
                return r;
        return variant_finish(m, v->body, v->flags, v->set_dest, cache, v->sender, serial, fd, ret);
}

static void test_reply_template(void)
{
        static const char *const callers[] = { ":1.4", ":1.5", ":1.44", NULL };
        const struct reply_variant v[] = {
                { 0, ":1.7", 0, -1, NULL },
                { 1, ":1.7", 0, -1, NULL },
                { 2, ":1.7", 0, -1, NULL },
                { 3, ":1.7", 0, -1, NULL },
                { 0, ":1.8", 0, -1, NULL },
                { 0, ":1.77", 0, -1, NULL },
                { 0, NULL, 0, -1, NULL },
                { 0, ":1.7", 1, -1, NULL },
                { 0, ":1.7", 4, -1, NULL },
                { 0, ":1.7", 2, -1, NULL },
                { 0, ":1.7", 3, -1, NULL },
                { 0, ":1.7", 0, 0, NULL },
                { 0, ":1.7", 0, KDBUS_MESSAGE_NO_REPLY_EXPECTED | KDBUS_MESSAGE_NO_AUTO_START, NULL },
                { 0, ":1.7", 0, -1, ":1.5" },
                { 1, ":1.7", 0, -1, NULL },
        };
        const size_t n_v = sizeof(v) / sizeof(v[0]);
        struct kdbus_message *calls[4] = { NULL };
        struct message_name_cache cache = { 0 };
        unsigned int bad = 0, hits = 0;
        uint32_t serial = 1;
        int pipefd[2];

        bad += pipe2(pipefd, O_CLOEXEC) != 0;
        /* the calls answered: from each caller (and none), with serials changing below */
        for (size_t i = 0; i < 4; ++i)
                bad += kdbus_message_new_method_call(&calls[i], "org.a.B", "/p", NULL, "M") != 0 ||
                       kdbus_message_seal(calls[i], 100 + (uint32_t)i, callers[i]) != 0;
        for (size_t a = 0; a < n_v && !bad; ++a) {
                for (size_t b = 0; b < n_v; ++b) {
                        const size_t seq[] = { a, a, b, b };

                        for (size_t k = 0; k < 4; ++k) {
                                struct kdbus_message *m = NULL, *ref = NULL;
                                const struct reply_variant *c = &v[seq[k]];
                                uint32_t gen = cache.reply.gen;

                                ++serial;
                                /* another serial for the call each time: the reply's REPLY_SERIAL */
                                bad += kdbus_message_set_serial(calls[c->call], serial + 1000) != 0;
                                if (reply_variant_make(c, calls[c->call], &cache, serial, pipefd[0], &m) != 0 ||
                                    reply_variant_make(c, calls[c->call], NULL, serial, pipefd[0], &ref) != 0) {
                                        ++bad;
                                        kdbus_message_unref(m);
                                        continue;
                                }
                                hits += cache.reply.gen == gen;
                                bad += !same_message(m, ref);
                                {
                                        uint32_t r1 = 0, r2 = 1;

                                        bad += kdbus_message_get_reply_serial(m, &r1) != 0 ||
                                               kdbus_message_get_reply_serial(ref, &r2) != 0 || r1 != r2;
                                }
                                message_unref_keep(m, &cache);
                                kdbus_message_unref(ref);
                        }
                }
        }
        for (size_t i = 0; i < 4; ++i)
                kdbus_message_unref(calls[i]);
        close(pipefd[0]);
        close(pipefd[1]);
        message_cache_release(&cache);
        bad += hits < n_v * n_v;
        tap_ok(bad == 0, "reply template: replies sealed from the last one's header are byte for byte as "
               "without it (%u from it, %u wrong)", hits, bad);
}

/*
 * A small message's bytes live in the object's own allocation, a large
 * one's are allocated; rewriting the header of either (a sender set on a
 * sealed message) reads the old bytes while writing the new ones.
 */
static void test_bytes_in_object(void)
{
        char big[600];
        unsigned int bad = 0;

        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = 0;
        for (int large = 0; large < 2; ++large) {
                struct kdbus_message *m = NULL, *p = NULL;
                const char *s = NULL, *sender;
                const void *data;
                size_t size;

                bad += kdbus_message_new_method_call(&m, "org.a.b", "/p", "org.a.I", "M") != 0;
                bad += kdbus_message_append(m, "s", large ? big : "hi") != 0;
                bad += kdbus_message_seal(m, 7, ":1.1") != 0;
                bad += kdbus_message_get_data(m, &data, &size) != 0 || (size > 500) != large;
                bad += kdbus_message_parse(&p, data, size) != 0;
                /* twice: the second rewrite starts from the first one's bytes */
                for (int i = 0; i < 2; ++i) {
                        sender = i ? ":1.23456789" : ":1.2";
                        bad += kdbus_message_set_sender(p, sender) != 0;
                        bad += strcmp(kdbus_message_get_sender(p), sender) != 0;
                        bad += strcmp(kdbus_message_get_member(p), "M") != 0;
                        bad += kdbus_message_rewind(p) != 0 || kdbus_message_read(p, "s", &s) != 0 ||
                               strcmp(s, large ? big : "hi") != 0;
                }
                kdbus_message_unref(p);
                kdbus_message_unref(m);
        }
        tap_ok(bad == 0, "api: small messages' bytes in the object, large ones allocated, headers "
               "rewritten from either (%u wrong)", bad);
}

/*
 * A received message's bytes reassembled into an allocation of their own
 * are taken over, not copied again; a small one goes into the object, and
 * a message that fails to parse frees what it took (ASan: no leak, no
 * double free).
 */
static void test_adopt(void)
{
        static const uint8_t body[4096];
        unsigned int bad = 0;

        for (int broken = 0; broken < 2; ++broken) {
                for (int large = 0; large < 2; ++large) {
                        struct kdbus_message *m = NULL, *p = NULL;
                        const void *data, *got;
                        size_t size, n;
                        uint8_t *bytes;
                        int r;

                        bad += kdbus_message_new_method_call(&m, "org.a.b", "/p", "org.a.I",
                                                             "M") != 0;
                        bad += kdbus_message_append_array(m, 'y', body,
                                                          large ? sizeof(body) : 8) != 0;
                        bad += kdbus_message_seal(m, 7, ":1.1") != 0;
                        bad += kdbus_message_get_data(m, &data, &size) != 0;
                        bytes = malloc(size);
                        if (!bytes)
                                abort();
                        memcpy(bytes, data, size);
                        if (broken)     /* the array's length: past the body's end */
                                memset(bytes + size - 4 - (large ? sizeof(body) : 8), 0x7f, 3);
                        r = message_parse_received(&p, bytes, size, NULL, NULL, &bytes);
                        if (broken) {
                                bad += r != -EBADMSG || p;
                        } else {
                                bad += r != 0 || (bytes == NULL) != large;
                                bad += kdbus_message_get_data(p, &got, &n) != 0 || n != size ||
                                       memcmp(got, data, size);
                        }
                        free(bytes);
                        kdbus_message_unref(p);
                        kdbus_message_unref(m);
                }
        }
        tap_ok(bad == 0, "parse: reassembled bytes taken over when large, copied when small, "
               "freed on a parse error (%u wrong)", bad);
}

static void test_fds(void)
{
        _cleanup_msg_ struct kdbus_message *m = NULL, *p = NULL;
        const void *data;
        size_t size;
        int pipefd[2], fds[2], fd = -1, fd2 = -1;
        bool ok;

        ok = pipe2(pipefd, O_CLOEXEC) == 0 &&
             kdbus_message_new_method_call(&m, ":1.2", "/a", NULL, "M") == 0 &&
             kdbus_message_append(m, "hh", pipefd[0], pipefd[1]) == 0 &&
             kdbus_message_seal(m, 9, NULL) == 0 &&
             kdbus_message_get_unix_fds(m) == 2 &&
             kdbus_message_read(m, "hh", &fd, &fd2) == 0 &&
             fd != pipefd[0] && fd2 != pipefd[1] && (fcntl(fd, F_GETFD) & FD_CLOEXEC);
        close(pipefd[0]);
        close(pipefd[1]);
        ok = ok && write(fd2, "x", 1) == 1;
        tap_ok(ok, "fds: appended descriptors are duplicated close-on-exec and owned by the message");

        ok = kdbus_message_get_data(m, &data, &size) == 0 &&
             kdbus_message_parse(&p, data, size) == 0 &&
             kdbus_message_get_unix_fds(p) == 2 &&
             kdbus_message_read(p, "h", &fd) == -EBADF;
        fds[0] = dup(fd2);
        fds[1] = -1;
        ok &= kdbus_message_attach_fds(p, fds, 1) == -EBADMSG &&
              kdbus_message_attach_fds(p, fds, 2) == 0 &&
              kdbus_message_read(p, "h", &fd) == 0 && fd == fds[0] &&
              kdbus_message_read(p, "h", &fd) == -EBADF;
        tap_ok(ok, "fds: received fds attach only in the announced number; -1 slots read EBADF");
}

int main(void)
{
        tap_plan(46);
        test_vectors();
        test_round_trip();
        test_api_errors();
        test_malformed();
        test_name_fields();
        test_inline_storage();
        test_name_cache();
        test_fields_cache();
        test_spares();
        test_thread_spare();
        test_call_template();
        test_reply_template();
        test_bytes_in_object();
        test_adopt();
        test_fds();
        return tap_done();
}
