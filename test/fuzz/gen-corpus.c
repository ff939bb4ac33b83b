// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Writes the seed corpus for fuzz-message: valid messages of every type,
 * with every value type and container, in both byte orders, plus the
 * dbus-daemon and busctl captures of libkdbus(3).
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "message.h"

static int n_written;

static int save(const char *dir, const char *name, struct kdbus_message *m)
{
        struct kdbus_message *be = NULL;
        const void *data;
        size_t size;
        char path[512];
        FILE *f;
        int r, i;

        for (i = 0; i < 2; ++i) {
                struct kdbus_message *w = m;

                if (i == 1) {
                        r = kdbus_message_convert(&be, m, 'B');
                        if (r < 0)
                                return r;
                        w = be;
                }
                kdbus_message_get_data(w, &data, &size);
                snprintf(path, sizeof(path), "%s/%s-%s", dir, name, i ? "be" : "le");
                f = fopen(path, "wb");
                if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
                        return -EIO;
                ++n_written;
        }
        kdbus_message_unref(be);
        return 0;
}

static int save_hex(const char *dir, const char *name, const char *hex)
{
        uint8_t buf[512];
        unsigned int v;
        size_t n = 0;
        char path[512];
        FILE *f;

        for (; *hex; ++hex) {
                if (*hex == ' ' || *hex == '\n')
                        continue;
                if (sscanf(hex, "%2x", &v) != 1)
                        return -EINVAL;
                buf[n++] = (uint8_t)v;
                ++hex;
        }
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "wb");
        if (!f || fwrite(buf, 1, n, f) != n || fclose(f) != 0)
                return -EIO;
        ++n_written;
        return 0;
}

int main(int argc, char **argv)
{
        struct kdbus_message *call = NULL, *ret = NULL, *err = NULL, *sig = NULL, *big = NULL;
        const char *dir = argc > 1 ? argv[1] : "corpus";
        int r = 0;

        r |= kdbus_message_new_method_call(&call, "org.example.Service", "/org/example/obj",
                                           "org.example.Iface", "Everything");
        r |= kdbus_message_append(call, "ybnqiuxtdsog", 1, 1, -2, 3, -4, 5, (int64_t)-6,
                                  (uint64_t)7, 8.5, "s\xc3\xa9", "/o", "a{sv}");
        r |= kdbus_message_append(call, "a{sv}(iasv)avaay", 2, "k1", "u", 7, "k2", "as", 2, "x", "y",
                                  -1, 3, "a", "b", "c", "t", (uint64_t)99,
                                  2, "s", "in variant", "(ib)", 4, 1, 2, 2, 0xaa, 0xbb, 0);
        r |= kdbus_message_append(call, "a{ya{tv}}vv", 1, 3, 1, (uint64_t)5, "v", "g", "ss",
                                  "(yv)", 9, "ad", 2, 1.0, -1.0, "av", 1, "o", "/");
        r |= kdbus_message_seal(call, 42, ":1.7");
        r |= save(dir, "call", call);

        r |= kdbus_message_new_method_return(&ret, call);
        r |= kdbus_message_append(ret, "as", 3, "one", "two", "three");
        r |= kdbus_message_seal(ret, 43, "org.example.Service");
        r |= save(dir, "return", ret);

        r |= kdbus_message_new_error(&err, call, "org.example.Error.Failed", "it broke");
        r |= kdbus_message_seal(err, 44, ":1.9");
        r |= save(dir, "error", err);

        r |= kdbus_message_new_signal(&sig, "/org/example/obj", "org.freedesktop.DBus.Properties",
                                      "PropertiesChanged");
        r |= kdbus_message_set_flags(sig, KDBUS_MESSAGE_NO_AUTO_START);
        r |= kdbus_message_append(sig, "sa{sv}as", "org.example.Iface", 1, "Foo", "i", 3, 1, "Bar");
        r |= kdbus_message_seal(sig, 45, ":1.7");
        r |= save(dir, "signal", sig);

        r |= kdbus_message_new_method_call(&big, ":1.3", "/", NULL, "Fds");
        r |= kdbus_message_append(big, "hh(yv)", 0, 1, 3, "v", "(ta(ss))", (uint64_t)1, 1, "a", "b");
        r |= kdbus_message_seal(big, 46, NULL);
        r |= save(dir, "fds", big);

        r |= save_hex(dir, "a7-hello-call",
                      "6c 01 00 01 00 00 00 00 01 00 00 00 6d 00 00 00 01 01 6f 00 15 00 00 00 "
                      "2f 6f 72 67 2f 66 72 65 65 64 65 73 6b 74 6f 70 2f 44 42 75 73 00 00 00 "
                      "03 01 73 00 05 00 00 00 48 65 6c 6c 6f 00 00 00 02 01 73 00 14 00 00 00 "
                      "6f 72 67 2e 66 72 65 65 64 65 73 6b 74 6f 70 2e 44 42 75 73 00 00 00 00 "
                      "06 01 73 00 14 00 00 00 6f 72 67 2e 66 72 65 65 64 65 73 6b 74 6f 70 2e "
                      "44 42 75 73 00 00 00 00");
        r |= save_hex(dir, "a7-hello-reply",
                      "6c 02 01 01 09 00 00 00 01 00 00 00 3d 00 00 00 06 01 73 00 04 00 00 00 "
                      "3a 31 2e 33 00 00 00 00 05 01 75 00 01 00 00 00 08 01 67 00 01 73 00 00 "
                      "07 01 73 00 14 00 00 00 6f 72 67 2e 66 72 65 65 64 65 73 6b 74 6f 70 2e "
                      "44 42 75 73 00 00 00 00 04 00 00 00 3a 31 2e 33 00");

        kdbus_message_unref(big);
        kdbus_message_unref(sig);
        kdbus_message_unref(err);
        kdbus_message_unref(ret);
        kdbus_message_unref(call);
        if (r) {
                fprintf(stderr, "gen-corpus: failed\n");
                return 1;
        }
        printf("gen-corpus: %d seeds in %s\n", n_written, dir);
        return 0;
}
