// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Signatures and the classic D-Bus marshalling (the D-Bus Specification,
 * 2.7): syntax checks, round trips of every type in both byte orders, the
 * exact wire layout, and malformed data rejected with a specific errno.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "marshal.h"
#include "signature.h"
#include "tap.h"

static char *repeat(char *buf, const char *prefix, char c, size_t n, const char *suffix)
{
        size_t l = strlen(prefix);

        strcpy(buf, prefix);
        memset(buf + l, c, n);
        strcpy(buf + l + n, suffix);
        return buf;
}

static void test_signatures(void)
{
        static const char *const valid[] = {
                "", "y", "ybnqiuxtdhsogv", "a{sv}", "(ii)", "a(yv)", "aai", "a{s(ai)}",
                "aa{sa{sv}}", "((y))", "a{ya{tv}}",
        };
        static const char *const invalid[] = {
                "a", "()", "(i", "i)", "{sv}", "a{vs}", "a{s}", "a{sii}", "a{(i)i}", "r",
                "m", "*", "e", "?", "@", "&", "^", "a{sv", "ai)", "}", "(a)", "{", "a{}",
        };
        char buf[600], tail[300];
        size_t i, len;
        bool ok;

        ok = true;
        for (i = 0; i < sizeof(valid) / sizeof(valid[0]); ++i)
                if (kdbus_signature_validate(valid[i]) != 0) {
                        tap_diag("valid signature \"%s\" refused", valid[i]);
                        ok = false;
                }
        tap_ok(ok, "signature: valid signatures accepted");

        ok = true;
        for (i = 0; i < sizeof(invalid) / sizeof(invalid[0]); ++i)
                if (kdbus_signature_validate(invalid[i]) != -EINVAL) {
                        tap_diag("invalid signature \"%s\" not refused", invalid[i]);
                        ok = false;
                }
        tap_ok(ok, "signature: malformed signatures refused with EINVAL");

        tap_ok(kdbus_signature_validate_single("a{sv}") == 0 &&
               kdbus_signature_validate_single("") == -EINVAL &&
               kdbus_signature_validate_single("ii") == -EINVAL,
               "signature: single complete type");

        tap_ok(kdbus_signature_validate(repeat(buf, "", 'a', 32, "i")) == 0 &&
               kdbus_signature_validate(repeat(buf, "", 'a', 33, "i")) == -ELOOP,
               "signature: 32 nested arrays allowed, 33 refused with ELOOP");

        repeat(tail, "", ')', 32, "");
        ok = kdbus_signature_validate(strcat(repeat(buf, "", '(', 32, "i"), tail)) == 0;
        repeat(tail, "", ')', 33, "");
        ok &= kdbus_signature_validate(strcat(repeat(buf, "", '(', 33, "i"), tail)) == -ELOOP;
        tap_ok(ok, "signature: 32 nested structs allowed, 33 refused with ELOOP");

        /* dict entries count as structs */
        repeat(tail, "", ')', 31, "");
        ok = kdbus_signature_validate(strcat(repeat(buf, "", '(', 31, "a{sv}"), tail)) == 0;
        repeat(tail, "", ')', 32, "");
        ok &= kdbus_signature_validate(strcat(repeat(buf, "", '(', 32, "a{sv}"), tail)) == -ELOOP;
        tap_ok(ok, "signature: dict entries count as structs for nesting");

        tap_ok(kdbus_signature_validate(repeat(buf, "", 'y', 255, "")) == 0 &&
               kdbus_signature_validate(repeat(buf, "", 'y', 256, "")) == -E2BIG,
               "signature: 255 bytes allowed, 256 refused with E2BIG");

        tap_ok(kdbus_signature_next("a{sv}ii", 0, 0, &len) == 0 && len == 5 &&
               kdbus_signature_next("(ia(ss))y", 0, 0, &len) == 0 && len == 8,
               "signature: length of the next complete type");

        tap_ok(kdbus_type_alignment('y') == 1 && kdbus_type_alignment('n') == 2 &&
               kdbus_type_alignment('b') == 4 && kdbus_type_alignment('s') == 4 &&
               kdbus_type_alignment('a') == 4 && kdbus_type_alignment('g') == 1 &&
               kdbus_type_alignment('v') == 1 && kdbus_type_alignment('(') == 8 &&
               kdbus_type_alignment('{') == 8 && kdbus_type_alignment('t') == 8 &&
               kdbus_type_alignment('d') == 8 && kdbus_type_alignment('h') == 4,
               "signature: alignment of every type code");
}

static void test_syntax(void)
{
        static const char *const utf8_ok[] = {
                "", "hello", "h\xc3\xa9llo", "\xe2\x82\xac", "\xf4\x8f\xbf\xbf",
                "\xef\xbf\xbe" /* noncharacter U+FFFE is allowed */, "\xf0\x9f\x98\x80",
        };
        static const char *const utf8_bad[] = {
                "\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xf0\x80\x80\x80", "\xed\xa0\x80",
                "\xed\xbf\xbf", "\xf4\x90\x80\x80", "\xe2\x82", "\x80", "\xff", "\xf8\x88\x80\x80\x80",
                "a\xc3",
        };
        size_t i;
        bool ok;

        ok = true;
        for (i = 0; i < sizeof(utf8_ok) / sizeof(utf8_ok[0]); ++i)
                ok &= kdbus_utf8_valid(utf8_ok[i], strlen(utf8_ok[i]));
        tap_ok(ok, "utf8: valid strings accepted");
        ok = true;
        for (i = 0; i < sizeof(utf8_bad) / sizeof(utf8_bad[0]); ++i)
                if (kdbus_utf8_valid(utf8_bad[i], strlen(utf8_bad[i]))) {
                        tap_diag("bad utf8 #%zu accepted", i);
                        ok = false;
                }
        ok &= !kdbus_utf8_valid("a\0b", 3);
        tap_ok(ok, "utf8: overlong, surrogate, > U+10FFFF, truncated and NUL refused");

        /* long strings: ASCII is checked eight bytes at a time */
        ok = true;
        for (i = 0; i < 24; ++i) {
                char buf[32];

                memset(buf, 'a', sizeof(buf));
                ok &= kdbus_utf8_valid(buf, sizeof(buf));
                buf[i] = 0;
                ok &= !kdbus_utf8_valid(buf, sizeof(buf));
                buf[i] = (char)0xff;
                ok &= !kdbus_utf8_valid(buf, sizeof(buf));
                buf[i] = (char)0xc3;
                buf[i + 1] = (char)0xa9;
                ok &= kdbus_utf8_valid(buf, sizeof(buf));
                buf[i + 1] = 'a';
                ok &= !kdbus_utf8_valid(buf, sizeof(buf));
                ok &= kdbus_utf8_valid(buf, i);
                if (!ok) {
                        tap_diag("long string, byte %zu", i);
                        break;
                }
        }
        tap_ok(ok, "utf8: NUL, bad and multi-byte sequences at any offset of a long string");

        tap_ok(kdbus_object_path_valid("/", 1) && kdbus_object_path_valid("/a/b_C9", 7) &&
               !kdbus_object_path_valid("", 0) && !kdbus_object_path_valid("a", 1) &&
               !kdbus_object_path_valid("/a/", 3) && !kdbus_object_path_valid("//", 2) &&
               !kdbus_object_path_valid("/a//b", 5) && !kdbus_object_path_valid("/a-b", 4) &&
               !kdbus_object_path_valid("/a.b", 4),
               "object paths per the D-Bus Specification");

        tap_ok(kdbus_bus_name_valid(":1.3") && kdbus_bus_name_valid("org.freedesktop.DBus") &&
               kdbus_bus_name_valid("a.b-c") && kdbus_bus_name_valid(":1.2.3a") &&
               !kdbus_bus_name_valid("org") && !kdbus_bus_name_valid(".a.b") &&
               !kdbus_bus_name_valid("a..b") && !kdbus_bus_name_valid("a.1b") &&
               !kdbus_bus_name_valid("a.b.") && !kdbus_bus_name_valid(":1") &&
               !kdbus_bus_name_valid("") && !kdbus_bus_name_valid("a.b$"),
               "bus names per the D-Bus Specification");

        tap_ok(kdbus_interface_name_valid("org.example.Iface") && kdbus_interface_name_valid("a._b") &&
               !kdbus_interface_name_valid("a.b-c") && !kdbus_interface_name_valid("a.1b") &&
               !kdbus_interface_name_valid("a") && !kdbus_interface_name_valid(":1.2") &&
               kdbus_member_name_valid("Hello") && kdbus_member_name_valid("_x9") &&
               !kdbus_member_name_valid("1a") && !kdbus_member_name_valid("a.b") &&
               !kdbus_member_name_valid("") && !kdbus_member_name_valid("a-b"),
               "interface, error and member names per the D-Bus Specification");

        {
                char name[300];

                memset(name, 'a', sizeof(name));
                name[1] = '.';
                name[255] = 0;
                ok = kdbus_interface_name_valid(name) && kdbus_bus_name_valid(name);
                name[255] = 'a';
                name[256] = 0;
                ok &= !kdbus_interface_name_valid(name) && !kdbus_bus_name_valid(name);
                tap_ok(ok, "names: 255 bytes allowed, 256 refused");
        }
}

/* the name checks as the D-Bus Specification words them, to test the fast ones against */
static bool ref_char_is_name(char c)
{
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               c == '_';
}

static bool ref_dotted(const char *s, bool dash, bool digit_first)
{
        size_t i, len = strnlen(s, 256), n_dots = 0;
        bool start = true;

        if (len == 0 || len > 255)
                return false;
        for (i = 0; i < len; ++i) {
                if (s[i] == '.') {
                        if (start)
                                return false;
                        ++n_dots;
                        start = true;
                        continue;
                }
                if (!ref_char_is_name(s[i]) && !(dash && s[i] == '-'))
                        return false;
                if (start && !digit_first && s[i] >= '0' && s[i] <= '9')
                        return false;
                start = false;
        }
        return !start && n_dots > 0;
}

static bool ref_bus_name(const char *s)
{
        if (s[0] == ':')
                return strnlen(s, 256) <= 255 && ref_dotted(s + 1, true, true);
        return ref_dotted(s, true, false);
}

static bool ref_member(const char *s)
{
        size_t i, len = strnlen(s, 256);

        if (len == 0 || len > 255 || (s[0] >= '0' && s[0] <= '9'))
                return false;
        for (i = 0; i < len; ++i)
                if (!ref_char_is_name(s[i]))
                        return false;
        return true;
}

/*
 * The table-driven name checks, NUL-terminated and with a length, agree
 * with the reference on random names around every boundary: lengths up
 * to 260, dots, dashes, digits first, colons, bytes that are no name's.
 */
static void test_names_against_reference(void)
{
        static const char alphabet[] = "aZ0_-.:$\x80.a.b";
        unsigned int seed = 1, bad = 0;
        char s[300];

        for (unsigned int n = 0; n < 200000; ++n) {
                size_t len, i;

                seed = seed * 1103515245 + 12345;
                len = (seed >> 8) % 8 == 0 ? 250 + (seed >> 12) % 11 : (seed >> 12) % 12;
                for (i = 0; i < len; ++i) {
                        seed = seed * 1103515245 + 12345;
                        /* mostly name characters, so that long names can be valid */
                        s[i] = (seed >> 16) % 16 ? "abc.ZY_9d:"[(seed >> 20) % (len > 20 ? 3 : 10)]
                                                 : alphabet[(seed >> 20) % (sizeof(alphabet) - 1)];
                }
                if (len > 20)
                        s[1] = '.';
                s[len] = 0;
                if (len && (seed >> 24) % 4 == 0)
                        s[0] = ':';
                bad += kdbus_bus_name_valid(s) != ref_bus_name(s);
                bad += kdbus_interface_name_valid(s) != ref_dotted(s, false, false);
                bad += kdbus_member_name_valid(s) != ref_member(s);
                bad += kdbus_bus_name_valid_len(s, len) != ref_bus_name(s);
                bad += kdbus_interface_name_valid_len(s, len) != ref_dotted(s, false, false);
                bad += kdbus_member_name_valid_len(s, len) != ref_member(s);
                /* with a length, a NUL inside is no name */
                if (len > 1) {
                        s[len / 2] = 0;
                        bad += kdbus_bus_name_valid_len(s, len) || kdbus_interface_name_valid_len(s, len) ||
                               kdbus_member_name_valid_len(s, len);
                }
        }
        tap_ok(bad == 0, "names: the fast checks agree with the specification's wording (%u differ)",
               bad);
        {
                char name[300];

                memset(name, 'a', sizeof(name));
                name[0] = ':';
                name[2] = '.';
                name[255] = 0;
                bad = !kdbus_bus_name_valid(name) || !kdbus_bus_name_valid_len(name, 255);
                name[255] = 'a';
                name[256] = 0;
                bad += kdbus_bus_name_valid(name) || kdbus_bus_name_valid_len(name, 256);
                memset(name, 'a', sizeof(name));
                name[255] = 0;
                bad += !kdbus_member_name_valid(name) || !kdbus_member_name_valid_len(name, 255);
                name[255] = 'a';
                name[256] = 0;
                bad += kdbus_member_name_valid(name) || kdbus_member_name_valid_len(name, 256);
                tap_ok(bad == 0, "names: unique and member names of 255 bytes allowed, 256 refused");
        }
}

struct all_basic {
        uint8_t y;
        int b;
        int16_t n;
        uint16_t q;
        int32_t i;
        uint32_t u;
        int64_t x;
        uint64_t t;
        double d;
        uint32_t h;
        const char *s, *o, *g;
};

static int write_all_basic(struct kdbus_writer *w, const struct all_basic *v)
{
        int r = 0;

        r |= kdbus_writer_append_basic(w, 'y', &v->y);
        r |= kdbus_writer_append_basic(w, 'b', &v->b);
        r |= kdbus_writer_append_basic(w, 'n', &v->n);
        r |= kdbus_writer_append_basic(w, 'q', &v->q);
        r |= kdbus_writer_append_basic(w, 'i', &v->i);
        r |= kdbus_writer_append_basic(w, 'u', &v->u);
        r |= kdbus_writer_append_basic(w, 'x', &v->x);
        r |= kdbus_writer_append_basic(w, 't', &v->t);
        r |= kdbus_writer_append_basic(w, 'd', &v->d);
        r |= kdbus_writer_append_basic(w, 'h', &v->h);
        r |= kdbus_writer_append_basic(w, 's', v->s);
        r |= kdbus_writer_append_basic(w, 'o', v->o);
        r |= kdbus_writer_append_basic(w, 'g', v->g);
        return r;
}

static int read_all_basic(struct kdbus_reader *r, struct all_basic *v)
{
        int ok = 1;

        ok &= kdbus_reader_read_basic(r, 'y', &v->y) == 1;
        ok &= kdbus_reader_read_basic(r, 'b', &v->b) == 1;
        ok &= kdbus_reader_read_basic(r, 'n', &v->n) == 1;
        ok &= kdbus_reader_read_basic(r, 'q', &v->q) == 1;
        ok &= kdbus_reader_read_basic(r, 'i', &v->i) == 1;
        ok &= kdbus_reader_read_basic(r, 'u', &v->u) == 1;
        ok &= kdbus_reader_read_basic(r, 'x', &v->x) == 1;
        ok &= kdbus_reader_read_basic(r, 't', &v->t) == 1;
        ok &= kdbus_reader_read_basic(r, 'd', &v->d) == 1;
        ok &= kdbus_reader_read_basic(r, 'h', &v->h) == 1;
        ok &= kdbus_reader_read_basic(r, 's', &v->s) == 1;
        ok &= kdbus_reader_read_basic(r, 'o', &v->o) == 1;
        ok &= kdbus_reader_read_basic(r, 'g', &v->g) == 1;
        return ok;
}

static bool all_basic_equal(const struct all_basic *a, const struct all_basic *b)
{
        return a->y == b->y && !!a->b == b->b && a->n == b->n && a->q == b->q && a->i == b->i &&
               a->u == b->u && a->x == b->x && a->t == b->t && a->d == b->d && a->h == b->h &&
               !strcmp(a->s, b->s) && !strcmp(a->o, b->o) && !strcmp(a->g, b->g);
}

static void test_basic_round_trip(char endian)
{
        static const struct all_basic vals[] = {
                { 0, 0, 0, 0, 0, 0, 0, 0, 0.0, 0, "", "/", "" },
                { 0xff, 7, INT16_MIN, UINT16_MAX, INT32_MIN, UINT32_MAX, INT64_MIN, UINT64_MAX,
                  -1.5e300, 2, "h\xc3\xa9llo \xf0\x9f\x98\x80", "/org/example/obj", "a{sv}(ii)" },
                { 1, 1, INT16_MAX, 1, INT32_MAX, 1, INT64_MAX, 1, 3.25, 1, "x", "/a", "v" },
        };
        struct kdbus_writer w;
        struct kdbus_reader r;
        struct all_basic got;
        size_t i;
        bool ok = true;

        for (i = 0; i < sizeof(vals) / sizeof(vals[0]); ++i) {
                ok &= kdbus_writer_init(&w, endian) == 0;
                ok &= write_all_basic(&w, &vals[i]) == 0;
                ok &= !strcmp(kdbus_writer_signature(&w), "ybnqiuxtdhsog");
                ok &= kdbus_reader_init(&r, w.data, w.size, 0, endian, "ybnqiuxtdhsog", 3) == 0;
                ok &= kdbus_reader_validate(&r) == 0;
                memset(&got, 0, sizeof(got));
                ok &= read_all_basic(&r, &got) && all_basic_equal(&vals[i], &got);
                ok &= kdbus_reader_at_end(&r) && r.pos == w.size;
                ok &= kdbus_reader_read_basic(&r, 'y', &got.y) == 0;
                kdbus_reader_deinit(&r);
                kdbus_writer_deinit(&w);
        }
        tap_ok(ok, "round trip of every basic type, endianness '%c'", endian);
}

static void test_layout(void)
{
        static const uint8_t be[] = {
                0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
                0x00, 0x00, 0x00, 0x03,
        };
        struct kdbus_writer w;
        uint8_t y = 1;
        uint32_t u = 2, n3 = 3;
        bool ok;

        ok = kdbus_writer_init(&w, 'l') == 0 &&
             kdbus_writer_append_basic(&w, 'y', &y) == 0 &&
             kdbus_writer_append_basic(&w, 'u', &u) == 0 &&
             kdbus_writer_append_basic(&w, 'u', &n3) == 0 &&
             kdbus_writer_open(&w, 'a', "t") == 0 &&
             kdbus_writer_close(&w) == 0 &&
             kdbus_writer_append_basic(&w, 'g', "i") == 0;
        /* expected: y(0) pad u(4) u(8) a-len(12) pad(16) ... */
        ok = ok && w.size == 16 + 3;
        if (ok) {
                static const uint8_t exp[] = {
                        0x01, 0, 0, 0, 0x02, 0, 0, 0, 0x03, 0, 0, 0, 0, 0, 0, 0, 0x01, 'i', 0,
                };

                ok = !memcmp(w.data, exp, sizeof(exp));
        }
        kdbus_writer_deinit(&w);
        tap_ok(ok, "layout: alignment and padding of an empty array of 8-aligned elements");

        ok = kdbus_writer_init(&w, 'B') == 0 &&
             kdbus_writer_append_basic(&w, 'y', &y) == 0 &&
             kdbus_writer_append_basic(&w, 'u', &u) == 0 &&
             kdbus_writer_append_basic(&w, 'u', &n3) == 0 &&
             w.size == sizeof(be) && !memcmp(w.data, be, sizeof(be));
        kdbus_writer_deinit(&w);
        tap_ok(ok, "layout: big-endian byte order");
}

static void test_containers(void)
{
        struct kdbus_writer w;
        struct kdbus_reader r;
        const char *s, *c;
        uint32_t u;
        int32_t i32;
        char type;
        int i, n;
        bool ok;

        /* a{sv} with two entries, then (ias), then an empty as */
        ok = kdbus_writer_init(&w, 'l') == 0;
        ok &= kdbus_writer_open(&w, 'a', "{sv}") == 0;
        for (i = 0; i < 2; ++i) {
                u = 40 + i;
                ok &= kdbus_writer_open(&w, '{', "sv") == 0;
                ok &= kdbus_writer_append_basic(&w, 's', i ? "two" : "one") == 0;
                ok &= kdbus_writer_open(&w, 'v', "u") == 0;
                ok &= kdbus_writer_append_basic(&w, 'u', &u) == 0;
                ok &= kdbus_writer_close(&w) == 0;
                ok &= kdbus_writer_close(&w) == 0;
        }
        ok &= kdbus_writer_close(&w) == 0;
        i32 = -5;
        ok &= kdbus_writer_open(&w, '(', "ias") == 0;
        ok &= kdbus_writer_append_basic(&w, 'i', &i32) == 0;
        ok &= kdbus_writer_open(&w, 'a', "s") == 0;
        ok &= kdbus_writer_append_basic(&w, 's', "x") == 0;
        ok &= kdbus_writer_close(&w) == 0;
        ok &= kdbus_writer_close(&w) == 0;
        ok &= kdbus_writer_open(&w, 'a', "s") == 0 && kdbus_writer_close(&w) == 0;
        ok &= !strcmp(kdbus_writer_signature(&w), "a{sv}(ias)as");
        tap_ok(ok, "containers: a{sv}, (ias), empty as written");

        ok = kdbus_reader_init(&r, w.data, w.size, 0, 'l', "a{sv}(ias)as", 0) == 0;
        ok &= kdbus_reader_validate(&r) == 0;
        ok &= kdbus_reader_peek(&r, &type, &c) == 1 && type == 'a' && !strcmp(c, "{sv}");
        ok &= kdbus_reader_enter(&r, 'a', "{sv}") == 1;
        n = 0;
        while (kdbus_reader_enter(&r, '{', "sv") == 1) {
                ok &= kdbus_reader_read_basic(&r, 's', &s) == 1 && !strcmp(s, n ? "two" : "one");
                ok &= kdbus_reader_peek(&r, &type, &c) == 1 && type == 'v' && !strcmp(c, "u");
                ok &= kdbus_reader_enter(&r, 'v', "s") == -ENXIO;
                ok &= kdbus_reader_enter(&r, 'v', "u") == 1;
                ok &= kdbus_reader_read_basic(&r, 'u', &u) == 1 && u == (uint32_t)(40 + n);
                ok &= kdbus_reader_exit(&r) == 0 && kdbus_reader_exit(&r) == 0;
                ++n;
        }
        ok &= n == 2 && kdbus_reader_exit(&r) == 0;
        ok &= kdbus_reader_enter(&r, '(', "ias") == 1;
        ok &= kdbus_reader_exit(&r) == -EBUSY;
        ok &= kdbus_reader_read_basic(&r, 'i', &i32) == 1 && i32 == -5;
        ok &= kdbus_reader_enter(&r, 'a', "s") == 1;
        ok &= kdbus_reader_read_basic(&r, 's', &s) == 1 && !strcmp(s, "x");
        ok &= kdbus_reader_read_basic(&r, 's', &s) == 0;
        ok &= kdbus_reader_exit(&r) == 0 && kdbus_reader_exit(&r) == 0;
        ok &= kdbus_reader_enter(&r, 'a', "s") == 1 && kdbus_reader_read_basic(&r, 's', &s) == 0 &&
              kdbus_reader_exit(&r) == 0;
        ok &= kdbus_reader_at_end(&r) && r.pos == w.size;
        kdbus_reader_deinit(&r);
        kdbus_writer_deinit(&w);
        tap_ok(ok, "containers: read back with enter/exit/peek; EBUSY on partial struct");

        /* writer refusals, each leaving the writer unchanged */
        ok = kdbus_writer_init(&w, 'l') == 0;
        ok &= kdbus_writer_open(&w, '{', "sv") == -ENXIO;
        ok &= kdbus_writer_open(&w, 'a', "{vs}") == -EINVAL;
        ok &= kdbus_writer_open(&w, '(', "") == -EINVAL;
        ok &= kdbus_writer_open(&w, 'v', "ii") == -EINVAL;
        ok &= kdbus_writer_append_basic(&w, 's', "\xc0\x80") == -EINVAL;
        ok &= kdbus_writer_append_basic(&w, 'o', "/a/") == -EINVAL;
        ok &= kdbus_writer_append_basic(&w, 'g', "a") == -EINVAL;
        ok &= kdbus_writer_close(&w) == -EINVAL;
        ok &= kdbus_writer_open(&w, 'a', "u") == 0;
        ok &= kdbus_writer_append_basic(&w, 's', "x") == -ENXIO;
        ok &= kdbus_writer_close(&w) == 0;
        ok &= kdbus_writer_open(&w, '(', "us") == 0;
        u = 1;
        ok &= kdbus_writer_append_basic(&w, 'u', &u) == 0;
        ok &= kdbus_writer_close(&w) == -ENXIO;
        ok &= kdbus_writer_append_basic(&w, 's', "x") == 0 && kdbus_writer_close(&w) == 0;
        ok &= kdbus_writer_open(&w, 'v', "u") == 0 && kdbus_writer_append_basic(&w, 'u', &u) == 0;
        ok &= kdbus_writer_append_basic(&w, 'u', &u) == -ENXIO;
        ok &= kdbus_writer_close(&w) == 0;
        ok &= !strcmp(kdbus_writer_signature(&w), "au(us)v");
        kdbus_writer_deinit(&w);
        tap_ok(ok, "containers: writer refuses mismatches (ENXIO) and bad contents (EINVAL)");
}

static void test_nesting(void)
{
        struct kdbus_writer w;
        struct kdbus_reader r;
        int i, n;
        uint8_t y = 1;
        bool ok;

        /* 64 nested variants are fine, the 65th container is not */
        ok = kdbus_writer_init(&w, 'l') == 0;
        for (i = 0; i < 64; ++i)
                ok &= kdbus_writer_open(&w, 'v', "v") == 0;
        ok &= w.depth == 64;
        ok &= kdbus_writer_open(&w, 'v', "y") == -ELOOP;
        ok &= kdbus_writer_append_basic(&w, 'y', &y) == -ENXIO;
        kdbus_writer_deinit(&w);
        tap_ok(ok, "nesting: writer allows 64 containers, refuses the 65th with ELOOP");

        /* 32 arrays through variants count together */
        ok = kdbus_writer_init(&w, 'l') == 0;
        for (i = 0; i < 31; ++i) {
                ok &= kdbus_writer_open(&w, 'v', "av") == 0;
                ok &= kdbus_writer_open(&w, 'a', "v") == 0;
        }
        ok &= kdbus_writer_open(&w, 'v', "aay") == -ELOOP;
        ok &= kdbus_writer_open(&w, 'v', "ay") == 0;
        kdbus_writer_deinit(&w);
        tap_ok(ok, "nesting: arrays inside variants count towards the limit of 32");

        /* reader: hand-made 65 nested variants */
        {
                uint8_t buf[65 * 3 + 1];

                for (n = 0; n < 65; ++n) {
                        buf[3 * n] = 1;
                        buf[3 * n + 1] = 'v';
                        buf[3 * n + 2] = 0;
                }
                buf[3 * 64 + 1] = 'y';
                buf[3 * 65] = 7;
                ok = kdbus_reader_init(&r, buf, sizeof(buf), 0, 'l', "v", 0) == 0 &&
                     kdbus_reader_validate(&r) == -ELOOP;
                kdbus_reader_deinit(&r);
                /* the same with 64 levels is valid */
                ok &= kdbus_reader_init(&r, buf + 3, sizeof(buf) - 3, 0, 'l', "v", 0) == 0 &&
                      kdbus_reader_validate(&r) == 0;
                kdbus_reader_deinit(&r);
                tap_ok(ok, "nesting: reader refuses 65 nested variants with ELOOP, accepts 64");
        }
}

static int validate_bytes(const void *data, size_t size, const char *sig, uint32_t n_fds)
{
        struct kdbus_reader r;
        int ret;

        ret = kdbus_reader_init(&r, data, size, 0, 'l', sig, n_fds);
        if (ret < 0)
                return ret;
        ret = kdbus_reader_validate(&r);
        kdbus_reader_deinit(&r);
        return ret;
}

static void test_malformed(void)
{
        static const uint8_t pad_nonzero[] = { 1, 0, 9, 0, 2, 0, 0, 0 };
        static const uint8_t bool2[] = { 2, 0, 0, 0 };
        static const uint8_t no_nul[] = { 1, 0, 0, 0, 'a', 'b' };
        static const uint8_t nul_inside[] = { 2, 0, 0, 0, 'a', 0, 0 };
        static const uint8_t bad_utf8[] = { 2, 0, 0, 0, 0xc0, 0x80, 0 };
        static const uint8_t str_len_huge[] = { 0xff, 0xff, 0xff, 0xff, 'a', 0 };
        static const uint8_t arr_huge[] = { 0x01, 0x00, 0x00, 0x04, 0, 0, 0, 0 };
        static const uint8_t arr_past_end[] = { 8, 0, 0, 0, 1, 0, 0, 0 };
        static const uint8_t arr_partial[] = { 6, 0, 0, 0, 1, 0, 0, 0, 2, 0 };
        static const uint8_t arr_pad[] = { 0, 0, 0, 0, 1, 0, 0, 0 };
        static const uint8_t truncated[] = { 1, 2, 3, 4, 5, 6, 7 };
        static const uint8_t fd_index[] = { 1, 0, 0, 0 };
        static const uint8_t bad_path[] = { 2, 0, 0, 0, '/', '/', 0 };
        static const uint8_t bad_sig[] = { 1, 'a', 0 };
        uint8_t deep_sig[36];
        static const uint8_t var_two[] = { 2, 'i', 'i', 0, 1, 0, 0, 0, 2, 0, 0, 0 };
        static const uint8_t var_sig_no_nul[] = { 1, 'y', 5, 7 };
        static const uint8_t trailing[] = { 1, 0, 0, 0, 0 };
        static const uint8_t ok_bytes[] = { 4, 0, 0, 0, 1, 0, 0, 0 };
        static const uint8_t struct_pad[] = { 1, 0, 0, 0, 1, 0, 0, 0, 5 };
        static const uint8_t dict_bad_elem[] = { 9, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 'k', 0, 0, 0, 2 };

        deep_sig[0] = 34;
        memset(deep_sig + 1, 'a', 33);
        deep_sig[34] = 'y';
        deep_sig[35] = 0;
        tap_ok(validate_bytes(pad_nonzero, sizeof(pad_nonzero), "yu", 0) == -EBADMSG,
               "malformed: non-zero alignment padding -> EBADMSG");
        tap_ok(validate_bytes(bool2, sizeof(bool2), "b", 0) == -EBADMSG,
               "malformed: boolean 2 -> EBADMSG");
        tap_ok(validate_bytes(no_nul, sizeof(no_nul), "s", 0) == -EBADMSG,
               "malformed: string without terminating NUL -> EBADMSG");
        tap_ok(validate_bytes(nul_inside, sizeof(nul_inside), "s", 0) == -EILSEQ,
               "malformed: NUL inside a string -> EILSEQ");
        tap_ok(validate_bytes(bad_utf8, sizeof(bad_utf8), "s", 0) == -EILSEQ,
               "malformed: overlong UTF-8 -> EILSEQ");
        tap_ok(validate_bytes(str_len_huge, sizeof(str_len_huge), "s", 0) == -EBADMSG,
               "malformed: string length beyond the data -> EBADMSG");
        tap_ok(validate_bytes(arr_huge, sizeof(arr_huge), "ay", 0) == -EMSGSIZE,
               "malformed: array length over 64 MiB -> EMSGSIZE");
        tap_ok(validate_bytes(arr_past_end, sizeof(arr_past_end), "ay", 0) == -EBADMSG,
               "malformed: array length beyond the data -> EBADMSG");
        tap_ok(validate_bytes(arr_partial, sizeof(arr_partial), "au", 0) == -EBADMSG,
               "malformed: array not ending at an element boundary -> EBADMSG");
        tap_ok(validate_bytes(arr_pad, sizeof(arr_pad), "at", 0) == -EBADMSG,
               "malformed: empty array of t without its padding -> EBADMSG");
        tap_ok(validate_bytes(truncated, sizeof(truncated), "t", 0) == -EBADMSG,
               "malformed: truncated 64-bit value -> EBADMSG");
        tap_ok(validate_bytes(fd_index, sizeof(fd_index), "h", 1) == -EBADMSG &&
               validate_bytes(fd_index, sizeof(fd_index), "h", 2) == 0,
               "malformed: fd index not below UNIX_FDS -> EBADMSG");
        tap_ok(validate_bytes(bad_path, sizeof(bad_path), "o", 0) == -EBADMSG,
               "malformed: invalid object path -> EBADMSG");
        tap_ok(validate_bytes(bad_sig, sizeof(bad_sig), "g", 0) == -EBADMSG,
               "malformed: invalid signature value -> EBADMSG");
        tap_ok(validate_bytes(deep_sig, sizeof(deep_sig), "g", 0) == -ELOOP,
               "malformed: signature value with 33 nested arrays -> ELOOP");
        tap_ok(validate_bytes(var_two, sizeof(var_two), "v", 0) == -EBADMSG,
               "malformed: variant signature of two types -> EBADMSG");
        tap_ok(validate_bytes(var_sig_no_nul, sizeof(var_sig_no_nul), "v", 0) == -EBADMSG,
               "malformed: variant signature without NUL -> EBADMSG");
        tap_ok(validate_bytes(trailing, sizeof(trailing), "u", 0) == -EBADMSG,
               "malformed: bytes after the last value -> EBADMSG");
        tap_ok(validate_bytes(ok_bytes, sizeof(ok_bytes), "ay", 0) == 0 &&
               validate_bytes(ok_bytes, 4, "u", 0) == 0,
               "malformed: control cases are valid");
        tap_ok(validate_bytes(struct_pad, sizeof(struct_pad), "u(y)", 0) == -EBADMSG,
               "malformed: non-zero padding before a struct -> EBADMSG");
        tap_ok(validate_bytes(dict_bad_elem, sizeof(dict_bad_elem), "a{sb}", 0) == -EBADMSG,
               "malformed: invalid value inside a dict entry -> EBADMSG");
        tap_ok(validate_bytes(NULL, 0, "u", 0) == -EBADMSG,
               "malformed: empty data for a signature -> EBADMSG");
}

static void test_fixed_arrays(void)
{
        static const uint32_t in[] = { 1, 2, 0xdeadbeef };
        static const int bools[] = { 1, 2 };
        struct kdbus_writer w;
        struct kdbus_reader r;
        const void *p;
        size_t size;
        bool ok;

        ok = kdbus_writer_init(&w, 'l') == 0 &&
             kdbus_writer_append_array(&w, 'u', in, sizeof(in)) == 0 &&
             kdbus_writer_append_array(&w, 'b', bools, sizeof(bools)) == -EINVAL &&
             kdbus_writer_append_array(&w, 'y', "abc", 3) == 0 &&
             !strcmp(kdbus_writer_signature(&w), "auay");
        ok = ok && kdbus_reader_init(&r, w.data, w.size, 0, 'l', "auay", 0) == 0;
        ok = ok && kdbus_reader_read_array(&r, 'u', &p, &size) == 1 && size == sizeof(in) &&
             !memcmp(p, in, size) && kdbus_reader_read_array(&r, 'y', &p, &size) == 1 &&
             size == 3 && !memcmp(p, "abc", 3);
        kdbus_reader_deinit(&r);
        kdbus_writer_deinit(&w);
        tap_ok(ok, "fixed arrays: append and zero-copy read");

        ok = kdbus_writer_init(&w, 'B') == 0 &&
             kdbus_writer_append_array(&w, 'u', in, sizeof(in)) == 0;
        ok = ok && kdbus_reader_init(&r, w.data, w.size, 0, 'B', "au", 0) == 0 &&
             kdbus_reader_read_array(&r, 'u', &p, &size) == -EOPNOTSUPP;
        {
                uint32_t v;

                ok = ok && kdbus_reader_enter(&r, 'a', "u") == 1 &&
                     kdbus_reader_read_basic(&r, 'u', &v) == 1 && v == 1 &&
                     kdbus_reader_read_basic(&r, 'u', &v) == 1 && v == 2 &&
                     kdbus_reader_read_basic(&r, 'u', &v) == 1 && v == 0xdeadbeef &&
                     kdbus_reader_read_basic(&r, 'u', &v) == 0;
        }
        kdbus_reader_deinit(&r);
        kdbus_writer_deinit(&w);
        tap_ok(ok, "fixed arrays: foreign byte order read element by element");
}

static void test_array_limit(void)
{
        struct kdbus_writer w;
        size_t n = KDBUS_ARRAY_MAX_SIZE + 1;
        uint8_t *big = calloc(1, n);
        bool ok;

        ok = big && kdbus_writer_init(&w, 'l') == 0 &&
             kdbus_writer_append_array(&w, 'y', big, n) == -EMSGSIZE &&
             kdbus_writer_append_array(&w, 'y', big, n - 1) == 0 &&
             w.size == 4 + n - 1;
        kdbus_writer_deinit(&w);
        free(big);
        tap_ok(ok, "limits: arrays up to 64 MiB, one byte more is EMSGSIZE");
}

int main(void)
{
        tap_plan(53);
        test_signatures();
        test_syntax();
        test_names_against_reference();
        test_basic_round_trip('l');
        test_basic_round_trip('B');
        test_layout();
        test_containers();
        test_nesting();
        test_malformed();
        test_fixed_arrays();
        test_array_limit();
        return tap_done();
}
