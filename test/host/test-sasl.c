// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The SASL state machine of kdbus-proxy (the D-Bus specification's authentication protocol) on the host:
 * the transcripts of libdbus, GDBus and sd-bus, pipelining, rejections
 * and the conditions that drop a connection.
 */

#include <errno.h>
#include <string.h>

#include "tap.h"
#include "../../proxy/proxy-sasl.c"

#define GUID "0123456789abcdef0123456789abcdef"

/*
 * Feed @in (@len bytes) as a client would; the replies are concatenated
 * into @out. Returns the last feed result, *rest the offset of the first
 * byte after BEGIN.
 */
static int run(struct proxy_sasl *s, const char *in, size_t len, char *out, size_t out_size,
               size_t *rest)
{
        size_t off = 0;
        int r = 0;

        out[0] = 0;
        while (off < len) {
                char reply[160];
                size_t used;

                r = proxy_sasl_feed(s, in + off, len - off, &used, reply, sizeof(reply));
                if (r <= 0)
                        break;
                off += used;
                strncat(out, reply, out_size - strlen(out) - 1);
                if (r == 2)
                        break;
        }
        if (rest)
                *rest = off;
        return r;
}

#define RUN(s, lit, out, rest) run(s, lit, sizeof(lit) - 1, out, sizeof(out), rest)

int main(void)
{
        struct proxy_sasl s;
        char out[1024], big[PROXY_SASL_MAX_LINE + 64];
        size_t rest;
        int r;

        tap_plan(17);

        proxy_sasl_init(&s, 0, GUID, false);
        r = RUN(&s, "\0AUTH EXTERNAL 30\r\nNEGOTIATE_UNIX_FD\r\nBEGIN\r\nl\1\0\1", out, &rest);
        tap_ok(r == 2 && !strcmp(out, "OK " GUID "\r\nAGREE_UNIX_FD\r\n") && s.unix_fd,
               "libdbus: AUTH EXTERNAL with initial response, fds agreed");
        tap_ok(rest == sizeof("\0AUTH EXTERNAL 30\r\nNEGOTIATE_UNIX_FD\r\nBEGIN\r\n") - 1,
               "pipelined bytes after BEGIN are left for the message stream");

        proxy_sasl_init(&s, 1000, GUID, false);
        r = RUN(&s, "\0AUTH\r\nAUTH EXTERNAL\r\nDATA\r\nNEGOTIATE_UNIX_FD\r\nBEGIN\r\n", out, &rest);
        tap_ok(r == 2 && !strcmp(out, "REJECTED EXTERNAL\r\nDATA\r\nOK " GUID "\r\nAGREE_UNIX_FD\r\n"),
               "GDBus: AUTH, REJECTED, AUTH EXTERNAL, DATA, empty DATA");

        proxy_sasl_init(&s, 1000, GUID, false);
        r = RUN(&s, "\0AUTH EXTERNAL\r\nDATA\r\nNEGOTIATE_UNIX_FD\r\nBEGIN\r\n", out, &rest);
        tap_ok(r == 2 && !strcmp(out, "DATA\r\nOK " GUID "\r\nAGREE_UNIX_FD\r\n"),
               "sd-bus: everything in one write");

        proxy_sasl_init(&s, 1000, GUID, false);
        r = RUN(&s, "\0AUTH EXTERNAL 31303030\r\nBEGIN\r\n", out, &rest);
        tap_ok(r == 2 && !strcmp(out, "OK " GUID "\r\n") && !s.unix_fd,
               "uid 1000 as hex of \"1000\" accepted, no fds without NEGOTIATE_UNIX_FD");

        proxy_sasl_init(&s, 1000, GUID, false);
        r = RUN(&s, "\0AUTH EXTERNAL 30\r\n", out, &rest);
        tap_ok(r == 1 && !strcmp(out, "REJECTED EXTERNAL\r\n") && s.state == PROXY_SASL_WAIT_AUTH,
               "another uid is rejected");

        proxy_sasl_init(&s, 0, GUID, false);
        r = RUN(&s, "\0AUTH EXTERNAL 726f6f74\r\n", out, &rest);
        tap_ok(r == 1 && !strcmp(out, "REJECTED EXTERNAL\r\n"), "user names are refused");

        proxy_sasl_init(&s, 0, GUID, false);
        r = RUN(&s, "\0AUTH ANONYMOUS\r\nAUTH DBUS_COOKIE_SHA1 30\r\n", out, &rest);
        tap_ok(!strcmp(out, "REJECTED EXTERNAL\r\nREJECTED EXTERNAL\r\n"),
               "ANONYMOUS and DBUS_COOKIE_SHA1 rejected");

        proxy_sasl_init(&s, 0, GUID, false);
        r = RUN(&s, "\0NEGOTIATE_UNIX_FD\r\nFOO\r\n", out, &rest);
        tap_ok(!strcmp(out, "ERROR \"Unknown command\"\r\nERROR \"Unknown command\"\r\n") &&
               s.state == PROXY_SASL_WAIT_AUTH, "NEGOTIATE_UNIX_FD before OK and unknown commands: ERROR");

        proxy_sasl_init(&s, 0, GUID, false);
        r = RUN(&s, "\0AUTH EXTERNAL\r\nCANCEL\r\nAUTH EXTERNAL 30\r\n", out, &rest);
        tap_ok(!strcmp(out, "DATA\r\nREJECTED EXTERNAL\r\nOK " GUID "\r\n"), "CANCEL returns to the start");

        proxy_sasl_init(&s, 0, GUID, false);
        r = RUN(&s, "\0BEGIN\r\n", out, &rest);
        tap_ok(r == -EPROTO, "BEGIN before OK drops the connection");

        proxy_sasl_init(&s, 0, GUID, false);
        r = RUN(&s, "XAUTH EXTERNAL 30\r\n", out, &rest);
        tap_ok(r == -EPROTO, "a first byte other than NUL drops the connection");

        proxy_sasl_init(&s, 0, GUID, false);
        r = RUN(&s, "\0AUTH \xc3\xa9\r\n", out, &rest);
        tap_ok(r == -EPROTO, "non-ASCII drops the connection");

        proxy_sasl_init(&s, 0, GUID, false);
        big[0] = 0;
        memset(big + 1, 'A', sizeof(big) - 1);
        r = run(&s, big, sizeof(big), out, sizeof(out), &rest);
        tap_ok(r == -EPROTO, "a line over 16 KiB drops the connection");

        proxy_sasl_init(&s, 0, GUID, false);
        r = RUN(&s, "\0AUTH EXTERNAL 31\r\nAUTH EXTERNAL 31\r\nAUTH EXTERNAL 31\r\nAUTH EXTERNAL 31\r\n"
                "AUTH EXTERNAL 31\r\nAUTH EXTERNAL 31\r\nAUTH EXTERNAL 31\r\nAUTH EXTERNAL 31\r\n",
                out, &rest);
        tap_ok(r == -EACCES, "the 8th REJECTED drops the connection");

        proxy_sasl_init(&s, 0, GUID, true);
        r = RUN(&s, "\0AUTH EXTERNAL 30\r\nAUTH EXTERNAL\r\n", out, &rest);
        tap_ok(!strcmp(out, "REJECTED EXTERNAL\r\nREJECTED EXTERNAL\r\n"),
               "a client the connect policy refuses gets REJECTED for every AUTH");

        proxy_sasl_init(&s, 0, GUID, false);
        r = RUN(&s, "\0AUTH EXTERNAL 3", out, &rest);
        tap_ok(r == 0 && rest == 1 && !strcmp(out, ""), "an incomplete line waits for more input");

        return tap_done();
}
