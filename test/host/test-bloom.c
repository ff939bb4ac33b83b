// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * SipHash-2-4 and the user-space bloom convention, checked against every
 * test vector and worked example of the convention (kdbus.match(7)). A
 * peer whose bits differ from these vectors silently misses signals of every
 * other peer.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bloom.h"
#include "siphash24.h"
#include "tap.h"

/* the eight keys as written in kdbus.match(7), independent of bloom.c */
static const char *const spec_keys[8] = {
        "b9660bf0467047c18875c49c54b9bd15",
        "aaa154a2e0714b39bfe1dd2e9fc54a3b",
        "63fdaebecd824812a16e4126cbfaa0c8",
        "23be452932d2462d82035228fe3717f5",
        "563bbfee5a4f4339afaa9408dff0fc10",
        "3180c873c7ea46d3aa25750f9e4c0929",
        "7df7184b7ba444d5853c06e06553966d",
        "f277e96f93b54e719a0c34883925bf35",
};

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

/* expected filter given as bytes: bit b is bit b%8 of byte b/8 (LE words) */
static bool words_equal_bytes(const uint64_t *words, const char *hex, size_t size)
{
        uint8_t bytes[4096];
        size_t i;

        if (parse_hex(hex, bytes, sizeof(bytes)) != size)
                return false;

        for (i = 0; i < size / 8; ++i) {
                uint64_t w = 0;
                unsigned int j;

                for (j = 0; j < 8; ++j)
                        w |= (uint64_t)bytes[i * 8 + j] << (8 * j);
                if (w != words[i]) {
                        tap_diag("word %zu: got 0x%016" PRIx64 " expected 0x%016" PRIx64,
                                 i, words[i], w);
                        return false;
                }
        }
        return true;
}

static bool bits_equal(const char *element, uint64_t size, uint64_t n_hash, const uint64_t *expect)
{
        uint64_t bits[64];
        uint64_t i;

        if (kdbus_bloom_bits(size, n_hash, element, strlen(element), bits) < 0)
                return false;
        for (i = 0; i < n_hash; ++i) {
                if (bits[i] != expect[i]) {
                        tap_diag("%s: index %" PRIu64 " is %" PRIu64 ", expected %" PRIu64,
                                 element, i, bits[i], expect[i]);
                        return false;
                }
        }
        return true;
}

static bool siphash_bytes_equal(uint64_t h, const char *hex)
{
        uint8_t b[8];
        unsigned int i;

        if (parse_hex(hex, b, sizeof(b)) != 8)
                return false;
        for (i = 0; i < 8; ++i)
                if (((h >> (8 * i)) & 0xff) != b[i])
                        return false;
        return true;
}

static void test_siphash(void)
{
        uint8_t key[16], msg[64], k0[16], k1[16];
        struct kdbus_siphash24 s;
        const char *ms = "message-type:signal";
        bool ok = true;
        unsigned int i, a, b;

        for (i = 0; i < 16; ++i)
                key[i] = (uint8_t)i;
        for (i = 0; i < sizeof(msg); ++i)
                msg[i] = (uint8_t)i;

        tap_ok(kdbus_siphash24(NULL, 0, key) == 0x726fdb47dd0e0e31ULL &&
               siphash_bytes_equal(kdbus_siphash24("", 0, key), "31 0e 0e dd 47 db 6f 72"),
               "siphash24: key 00..0f, empty message (A.1)");
        tap_ok(kdbus_siphash24(msg, 15, key) == 0xa129ca6149be45e5ULL &&
               siphash_bytes_equal(kdbus_siphash24(msg, 15, key), "e5 45 be 49 61 ca 29 a1"),
               "siphash24: key 00..0f, 15-byte message (A.1)");

        parse_hex(spec_keys[0], k0, sizeof(k0));
        parse_hex(spec_keys[1], k1, sizeof(k1));
        tap_ok(kdbus_siphash24(ms, strlen(ms), k0) == 0x7fd5664a6cfa84ebULL &&
               siphash_bytes_equal(kdbus_siphash24(ms, strlen(ms), k0), "eb 84 fa 6c 4a 66 d5 7f"),
               "siphash24: key_0, \"message-type:signal\" (registry 6.5, A.2)");
        tap_ok(siphash_bytes_equal(kdbus_siphash24(ms, strlen(ms), k1), "8e 84 64 8a 59 38 bb 35"),
               "siphash24: key_1, \"message-type:signal\" (userspace 4.6, A.2)");

        /* streaming in three pieces equals one shot, for every split */
        for (i = 0; i <= sizeof(msg) && ok; ++i) {
                uint64_t ref = kdbus_siphash24(msg, i, key);

                for (a = 0; a <= i && ok; ++a) {
                        for (b = a; b <= i && ok; ++b) {
                                kdbus_siphash24_init(&s, key);
                                kdbus_siphash24_compress(&s, msg, a);
                                kdbus_siphash24_compress(&s, msg + a, b - a);
                                kdbus_siphash24_compress(&s, msg + b, i - b);
                                if (kdbus_siphash24_finalize(&s) != ref) {
                                        tap_diag("len %u split %u/%u differs", i, a, b);
                                        ok = false;
                                }
                        }
                }
        }
        tap_ok(ok, "siphash24: streaming in pieces equals one-shot hashing");
}

static const struct {
        const char *element;
        uint64_t bits[8];
} a2[] = {
        { "message-type:signal",            { 388, 108, 102, 383, 132, 138, 312, 309 } },
        { "message-type:method_call",       { 53, 167, 220, 139, 14, 293, 330, 225 } },
        { "interface:org.freedesktop.DBus", { 419, 384, 90, 1, 317, 249, 417, 474 } },
        { "member:NameOwnerChanged",        { 289, 108, 414, 301, 234, 125, 244, 433 } },
        { "path:/org/freedesktop/DBus",     { 281, 246, 377, 301, 215, 27, 143, 494 } },
        { "path-slash-prefix:/",            { 163, 298, 112, 257, 171, 260, 48, 403 } },
        { "interface:org.example.Iface",    { 99, 209, 329, 182, 431, 136, 243, 424 } },
        { "member:Changed",                 { 211, 251, 71, 415, 188, 443, 314, 317 } },
        { "path:/org/example/obj",          { 12, 411, 66, 165, 418, 182, 310, 263 } },
        { "path-slash-prefix:/org/example", { 466, 399, 261, 180, 179, 482, 505, 89 } },
        { "arg0:hello",                     { 225, 265, 319, 133, 488, 259, 312, 403 } },
        { "arg0:org.example.Foo",           { 8, 445, 243, 448, 56, 96, 363, 367 } },
        { "arg0-dot-prefix:org.example",    { 228, 171, 358, 459, 291, 338, 158, 194 } },
        { "arg1-has:x",                     { 340, 159, 389, 206, 11, 98, 32, 416 } },
};

static void test_bits(void)
{
        static const uint64_t s8n4[] = { 43, 4, 58, 44 };
        static const uint64_t s8n1[] = { 43 };
        static const uint64_t s4096[] = { 27524, 31340, 19046, 21887, 3716, 25738, 22840, 15157 };
        uint64_t words[8], single[8];
        struct kdbus_bloom b, one;
        bool ok = true;
        size_t i, j;

        for (i = 0; i < sizeof(a2) / sizeof(a2[0]); ++i)
                tap_ok(bits_equal(a2[i].element, 64, 8, a2[i].bits),
                       "bits, size 64 n_hash 8: %s (A.2)", a2[i].element);

        tap_ok(bits_equal("message-type:signal", 8, 4, s8n4),
               "bits, size 8 n_hash 4: message-type:signal (A.3)");
        tap_ok(bits_equal("message-type:signal", 8, 1, s8n1),
               "bits, size 8 n_hash 1: message-type:signal (registry 6.5)");
        tap_ok(bits_equal("message-type:signal", 4096, 8, s4096),
               "bits, size 4096 n_hash 8: message-type:signal (A.3)");

        /* setting bit b means bit b%64 of word b/64, and nothing else */
        kdbus_bloom_init(&b, words, 64, 8);
        for (i = 0; i < sizeof(a2) / sizeof(a2[0]) && ok; ++i) {
                kdbus_bloom_init(&one, single, 64, 8);
                kdbus_bloom_add_str(&one, a2[i].element);
                kdbus_bloom_add_str(&b, a2[i].element);
                for (j = 0; j < 512; ++j) {
                        bool set = (single[j / 64] >> (j % 64)) & 1;
                        bool want = false;
                        unsigned int k;

                        for (k = 0; k < 8; ++k)
                                want |= a2[i].bits[k] == j;
                        if (set != want) {
                                tap_diag("%s: bit %zu is %d", a2[i].element, j, set);
                                ok = false;
                        }
                }
        }
        tap_ok(ok, "add sets exactly the indexed bits (word b/64, bit b%%64)");
}

static void test_parameters(void)
{
        uint64_t words[8];
        struct kdbus_bloom b = { NULL, 0, 0 };

        tap_ok(kdbus_bloom_check_parameter(64, 8) == 0 &&
               kdbus_bloom_check_parameter(8, 1) == 0 &&
               kdbus_bloom_check_parameter(4096, 32) == 0 &&
               kdbus_bloom_check_parameter(8, 64) == 0,
               "parameters: defaults and limits accepted");
        tap_ok(kdbus_bloom_check_parameter(0, 8) == -EOPNOTSUPP &&
               kdbus_bloom_check_parameter(64, 0) == -EOPNOTSUPP &&
               kdbus_bloom_check_parameter(64, 33) == -EOPNOTSUPP &&
               kdbus_bloom_check_parameter(8, 65) == -EOPNOTSUPP &&
               kdbus_bloom_check_parameter(12, 1) == -EOPNOTSUPP &&
               kdbus_bloom_init(&b, words, 64, 0) == -EOPNOTSUPP && b.data == NULL,
               "parameters: size 0, n_hash 0, n_hash * w > 64 refused with EOPNOTSUPP");
}

/* filter of A.4: PATH /org/example/obj, Iface, Changed, body "su" ("hello", 7) */
static void build_a4(struct kdbus_bloom *b)
{
        kdbus_bloom_add_message_type(b, "signal");
        kdbus_bloom_add_interface(b, "org.example.Iface");
        kdbus_bloom_add_member(b, "Changed");
        kdbus_bloom_add_path(b, "/org/example/obj");
        kdbus_bloom_add_arg(b, 0, "hello");
        /* the 'u' argument ends the walk */
}

static void test_appendix_filters(void)
{
        uint64_t filter[8], mask[8], manual[8];
        struct kdbus_bloom f, m, x;
        static const char *const a4_strings[] = {
                "message-type:signal", "interface:org.example.Iface", "member:Changed",
                "path:/org/example/obj", "path-slash-prefix:/org/example/obj",
                "path-slash-prefix:/org/example/obj", "path-slash-prefix:/org/example/",
                "path-slash-prefix:/org/example", "path-slash-prefix:/org/",
                "path-slash-prefix:/org", "path-slash-prefix:/", "arg0:hello",
                "arg0-dot-prefix:hello", "arg0-slash-prefix:hello",
        };
        size_t i;

        kdbus_bloom_init(&f, filter, 64, 8);
        build_a4(&f);
        tap_ok(words_equal_bytes(filter,
               "00 11 00 00 00 00 31 00 94 01 04 06 da 10 01 00"
               "30 85 00 00 28 08 5a 10 00 00 4a 08 02 80 08 08"
               "fe 8b 04 00 80 05 64 a5 00 0a 80 00 14 00 00 80"
               "10 c0 08 89 14 93 01 b8 10 10 04 40 84 03 00 82", 64),
               "filter of a signal with path, interface, member, args \"su\" (A.4)");

        kdbus_bloom_init(&x, manual, 64, 8);
        for (i = 0; i < sizeof(a4_strings) / sizeof(a4_strings[0]); ++i)
                kdbus_bloom_add_str(&x, a4_strings[i]);
        tap_ok(memcmp(manual, filter, 64) == 0,
               "A.4 filter equals the union of its listed strings");

        kdbus_bloom_init(&m, mask, 64, 8);
        kdbus_bloom_add_message_type(&m, "signal");
        kdbus_bloom_add_interface(&m, "org.example.Iface");
        kdbus_bloom_mask_arg(&m, 0, "hello");
        tap_ok(words_equal_bytes(mask,
               "00 00 00 00 00 00 00 00 00 00 00 00 48 10 00 00"
               "30 05 00 00 00 00 40 00 00 00 02 00 02 00 08 00"
               "08 02 00 00 00 00 20 81 00 02 00 00 00 00 00 80"
               "10 00 08 00 00 81 00 00 00 00 00 00 00 01 00 00", 64) &&
               kdbus_bloom_match(filter, 0, mask, 1, 64),
               "mask type=signal,interface=org.example.Iface,arg0=hello, passes A.4 (A.5)");

        kdbus_bloom_clear(&m);
        kdbus_bloom_add_message_type(&m, "signal");
        kdbus_bloom_mask_path_namespace(&m, "/org/example");
        tap_ok(words_equal_bytes(mask,
               "00 00 00 00 00 00 00 00 00 00 00 02 40 10 00 00"
               "10 04 00 00 00 00 18 00 00 00 00 00 00 00 00 00"
               "20 00 00 00 00 00 20 01 00 00 00 00 00 00 00 80"
               "10 80 00 00 00 00 00 00 00 00 04 00 04 00 00 02", 64) &&
               kdbus_bloom_match(filter, 0, mask, 1, 64),
               "mask type=signal,path_namespace=/org/example, passes A.4 (A.5)");

        kdbus_bloom_clear(&m);
        kdbus_bloom_add_message_type(&m, "signal");
        kdbus_bloom_add_member(&m, "Other");
        tap_ok(!kdbus_bloom_match(filter, 0, mask, 1, 64),
               "mask type=signal,member=Other does not pass A.4 (A.5)");

        /* A.6: PropertiesChanged (s, a{sv}, as): the a{sv} stops the walk */
        kdbus_bloom_clear(&f);
        kdbus_bloom_add_message_type(&f, "signal");
        kdbus_bloom_add_interface(&f, "org.freedesktop.DBus.Properties");
        kdbus_bloom_add_member(&f, "PropertiesChanged");
        kdbus_bloom_add_path(&f, "/org/example/obj");
        kdbus_bloom_add_arg(&f, 0, "org.example.Iface");
        tap_ok(words_equal_bytes(filter,
               "00 11 80 21 22 00 31 08 1c 00 04 9e c6 10 41 00"
               "10 84 00 e8 2e 08 5a 20 86 80 28 40 10 00 80 08"
               "f6 89 00 0c 88 0d 75 81 01 08 96 08 54 00 10 98"
               "14 c1 08 0d 14 53 01 a2 00 38 04 46 c4 00 44 5b", 64),
               "filter of PropertiesChanged, walk stops at a{sv} (A.6)");

        memcpy(manual, filter, sizeof(manual));
        kdbus_bloom_add_arg_has(&f, 2, "Foo");
        tap_ok(memcmp(manual, filter, sizeof(manual)) != 0,
               "adding arg2-has:Foo changes the A.6 filter (so the stop matters)");
}

static bool words_equal(const uint64_t *got, const uint64_t *want, size_t n)
{
        size_t i;

        for (i = 0; i < n; ++i) {
                if (got[i] != want[i]) {
                        tap_diag("word %zu: got 0x%016" PRIx64 " expected 0x%016" PRIx64,
                                 i, got[i], want[i]);
                        return false;
                }
        }
        return true;
}

static void test_registry_vectors(void)
{
        static const uint64_t want_filter[8] = {
                0x6d2b4045080813a2ULL, 0xa01191c5c4e4001cULL, 0x32030808e1808410ULL,
                0x065a043a208382e4ULL, 0x2b292daa2a00235eULL, 0x924aa844080e0850ULL,
                0xae5f405b6d08a835ULL, 0x3140c0002632e801ULL,
        };
        static const uint64_t want_mask[8] = {
                0x0100000000000102ULL, 0x2000104104000000ULL, 0x0000000000000410ULL,
                0x0218040000000000ULL, 0x2120200200000000ULL, 0x8000880000000000ULL,
                0x2002000a40000011ULL, 0x0000000004000001ULL,
        };
        uint64_t filter[8], mask[8];
        struct kdbus_bloom f, m;

        kdbus_bloom_init(&f, filter, 64, 8);
        kdbus_bloom_add_message_type(&f, "signal");
        kdbus_bloom_add_path(&f, "/org/freedesktop/DBus");
        kdbus_bloom_add_interface(&f, "org.freedesktop.DBus");
        kdbus_bloom_add_member(&f, "NameOwnerChanged");
        kdbus_bloom_add_arg(&f, 0, "org.example.Foo");
        kdbus_bloom_add_arg(&f, 1, "");
        kdbus_bloom_add_arg(&f, 2, ":1.42");
        tap_ok(words_equal(filter, want_filter, 8),
               "filter of NameOwnerChanged(org.example.Foo, \"\", :1.42) (registry 6.5)");

        kdbus_bloom_init(&m, mask, 64, 8);
        kdbus_bloom_add_message_type(&m, "signal");
        kdbus_bloom_add_interface(&m, "org.freedesktop.DBus");
        kdbus_bloom_add_member(&m, "NameOwnerChanged");
        kdbus_bloom_mask_arg(&m, 0, "org.example.Foo");
        tap_ok(words_equal(mask, want_mask, 8) && kdbus_bloom_match(filter, 0, mask, 1, 64),
               "mask type,interface,member,arg0 equals vector and passes (registry 6.5)");

        kdbus_bloom_clear(&m);
        kdbus_bloom_mask_arg_namespace(&m, 0, "org.example");
        tap_ok(kdbus_bloom_match(filter, 0, mask, 1, 64),
               "mask arg0namespace=org.example passes (registry 6.5)");

        kdbus_bloom_clear(&m);
        kdbus_bloom_mask_path_namespace(&m, "/org/freedesktop");
        tap_ok(kdbus_bloom_match(filter, 0, mask, 1, 64),
               "mask path_namespace=/org/freedesktop passes (registry 6.5)");

        kdbus_bloom_clear(&m);
        kdbus_bloom_mask_path_namespace(&m, "/org/free");
        tap_ok(!kdbus_bloom_match(filter, 0, mask, 1, 64),
               "mask path_namespace=/org/free does not pass (registry 6.5)");
}

/* expansion must add exactly the listed values: compare with their union */
static bool prefixes_equal(const char *label, const char *value, char sep,
                           const char *const *values, size_t n)
{
        uint64_t a[8], b[8];
        struct kdbus_bloom x, y;
        size_t i;

        kdbus_bloom_init(&x, a, 64, 8);
        kdbus_bloom_init(&y, b, 64, 8);
        kdbus_bloom_add_prefixes(&x, label, value, sep);
        for (i = 0; i < n; ++i)
                kdbus_bloom_add_pair(&y, label, values[i]);
        return memcmp(a, b, sizeof(a)) == 0;
}

static void test_prefixes(void)
{
        static const char *const p1[] = {
                "/org/freedesktop/DBus", "/org/freedesktop/", "/org/freedesktop",
                "/org/", "/org", "/",
        };
        static const char *const p2[] = {
                "org.example.Foo", "org.example.", "org.example", "org.", "org",
        };
        static const char *const p3[] = {
                "/org/example/obj", "/org/example/", "/org/example", "/org/", "/org", "/",
        };
        static const char *const p4[] = { "hello" };
        static const char *const p5[] = { ":1.42", ":1.", ":1" };
        static const char *const p6[] = { "/" };
        static const char *const p7[] = { "a/", "a" };
        uint64_t a[8], b[8];
        struct kdbus_bloom x, y;

        tap_ok(prefixes_equal("path-slash-prefix", "/org/freedesktop/DBus", '/', p1, 6),
               "slash expansion of /org/freedesktop/DBus (registry 6.2)");
        tap_ok(prefixes_equal("arg0-dot-prefix", "org.example.Foo", '.', p2, 5),
               "dot expansion of org.example.Foo (registry 6.2, userspace 4.5)");
        tap_ok(prefixes_equal("path-slash-prefix", "/org/example/obj", '/', p3, 6),
               "slash expansion of /org/example/obj (userspace 4.5)");
        tap_ok(prefixes_equal("arg0-dot-prefix", "hello", '.', p4, 1),
               "a value without separator yields only itself (registry 6.2)");
        tap_ok(prefixes_equal("arg2-dot-prefix", ":1.42", '.', p5, 3) &&
               prefixes_equal("path-slash-prefix", "/", '/', p6, 1) &&
               prefixes_equal("x", "a/", '/', p7, 2),
               "expansion corner cases: :1.42, \"/\", trailing separator");

        /* the empty value adds "label:" (pair with empty value) */
        kdbus_bloom_init(&x, a, 64, 8);
        kdbus_bloom_init(&y, b, 64, 8);
        kdbus_bloom_add_pair(&x, "arg1", "");
        kdbus_bloom_add_str(&y, "arg1:");
        tap_ok(memcmp(a, b, sizeof(a)) == 0, "pair with empty value is \"label:\"");
}

static void test_args(void)
{
        uint64_t a[8], b[8], zero[8] = { 0 };
        struct kdbus_bloom x, y;

        kdbus_bloom_init(&x, a, 64, 8);
        kdbus_bloom_init(&y, b, 64, 8);
        tap_ok(kdbus_bloom_add_arg(&x, 64, "v") == -EINVAL &&
               kdbus_bloom_add_arg_has(&x, 64, "v") == -EINVAL &&
               kdbus_bloom_mask_arg(&x, 64, "v") == -EINVAL &&
               kdbus_bloom_mask_arg_namespace(&x, 64, "v") == -EINVAL &&
               kdbus_bloom_mask_arg_has(&x, 64, "v") == -EINVAL &&
               kdbus_bloom_mask_arg_slash_prefix(&x, 64, "v") == -EINVAL &&
               memcmp(a, zero, sizeof(a)) == 0,
               "argument index 64 is refused with EINVAL and adds nothing");

        kdbus_bloom_add_arg(&x, 63, "a.b/c");
        kdbus_bloom_add_str(&y, "arg63:a.b/c");
        kdbus_bloom_add_str(&y, "arg63-dot-prefix:a.b/c");
        kdbus_bloom_add_str(&y, "arg63-dot-prefix:a.");
        kdbus_bloom_add_str(&y, "arg63-dot-prefix:a");
        kdbus_bloom_add_str(&y, "arg63-slash-prefix:a.b/c");
        kdbus_bloom_add_str(&y, "arg63-slash-prefix:a.b/");
        kdbus_bloom_add_str(&y, "arg63-slash-prefix:a.b");
        tap_ok(memcmp(a, b, sizeof(a)) == 0, "arg63 adds argN, dot and slash expansions");

        kdbus_bloom_clear(&x);
        kdbus_bloom_clear(&y);
        kdbus_bloom_add_arg_has(&x, 1, "x");
        kdbus_bloom_mask_arg_has(&y, 1, "x");
        tap_ok(memcmp(a, b, sizeof(a)) == 0 && bits_equal("arg1-has:x", 64, 8, a2[13].bits),
               "arg1-has:x in filter and mask");

        kdbus_bloom_clear(&x);
        kdbus_bloom_clear(&y);
        kdbus_bloom_mask_arg_slash_prefix(&x, 0, "/a/b");
        kdbus_bloom_mask_path(&y, "/a");
        kdbus_bloom_add_str(&y, "arg0-slash-prefix:/a/b");
        kdbus_bloom_add_str(&y, "path:/a");
        kdbus_bloom_mask_path(&x, "/a");
        tap_ok(memcmp(a, b, sizeof(a)) == 0, "mask helpers for path and argN-slash-prefix");
}

static void test_match(void)
{
        uint64_t filter[2], mask[6];

        /* three generations of 16 bytes; filter generation selects */
        filter[0] = 0x0f;
        filter[1] = 0;
        mask[0] = 0x01; mask[1] = 0;            /* gen 0: passes */
        mask[2] = 0x10; mask[3] = 0;            /* gen 1: fails */
        mask[4] = 0x0e; mask[5] = 0;            /* gen 2: passes */
        tap_ok(kdbus_bloom_match(filter, 0, mask, 3, 16) &&
               !kdbus_bloom_match(filter, 1, mask, 3, 16) &&
               kdbus_bloom_match(filter, 2, mask, 3, 16) &&
               kdbus_bloom_match(filter, 9, mask, 3, 16) &&
               !kdbus_bloom_match(filter, 9, mask, 2, 16),
               "match uses mask generation min(g, G-1) (registry 5.5)");

        mask[0] = 0; mask[1] = 0;
        filter[0] = 0; filter[1] = 0;
        tap_ok(kdbus_bloom_match(filter, 0, mask, 1, 16), "all-zero mask passes an empty filter");
        mask[0] = ~0ULL; mask[1] = ~0ULL;
        filter[0] = ~0ULL; filter[1] = ~1ULL;
        tap_ok(!kdbus_bloom_match(filter, 0, mask, 1, 16) &&
               (filter[1] = ~0ULL, kdbus_bloom_match(filter, 0, mask, 1, 16)),
               "all-ones mask passes only an all-ones filter");
}

int main(void)
{
        tap_plan(5 + 14 + 4 + 2 + 7 + 5 + 6 + 4 + 3);
        test_siphash();
        test_bits();
        test_parameters();
        test_appendix_filters();
        test_registry_vectors();
        test_prefixes();
        test_args();
        test_match();
        return tap_done();
}
