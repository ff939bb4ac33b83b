// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * SASL for kdbus-proxy (the wire protocol's authentication): EXTERNAL with
 * and without an initial response, NEGOTIATE_UNIX_FD, pipelined BEGIN.
 * Replies are dbus-daemon's exact lines.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "proxy-sasl.h"

void proxy_sasl_init(struct proxy_sasl *s, uid_t uid, const char *guid, bool refuse)
{
        memset(s, 0, sizeof(*s));
        s->state = PROXY_SASL_NUL;
        s->uid = uid;
        s->refuse = refuse;
        snprintf(s->guid, sizeof(s->guid), "%s", guid);
}

static int hexval(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* the hex-encoded identity must be the decimal peer uid */
static bool identity_ok(const struct proxy_sasl *s, const char *hex, size_t len)
{
        char dec[32];
        size_t n = 0;

        if (len == 0 || len % 2 || len / 2 >= sizeof(dec))
                return false;
        for (size_t i = 0; i < len; i += 2) {
                int hi = hexval(hex[i]), lo = hexval(hex[i + 1]);

                if (hi < 0 || lo < 0)
                        return false;
                dec[n] = (char)(hi * 16 + lo);
                if (dec[n] < '0' || dec[n] > '9')
                        return false;
                n++;
        }
        dec[n] = 0;
        if (n > 1 && dec[0] == '0')
                return false;
        {
                char want[32];

                snprintf(want, sizeof(want), "%lu", (unsigned long)s->uid);
                return strcmp(dec, want) == 0;
        }
}

static int reject(struct proxy_sasl *s, char *reply, size_t size)
{
        snprintf(reply, size, "REJECTED EXTERNAL\r\n");
        s->state = PROXY_SASL_WAIT_AUTH;
        if (++s->n_rejected >= PROXY_SASL_MAX_REJECTS)
                return -EACCES;
        return 1;
}

static int ok(struct proxy_sasl *s, char *reply, size_t size)
{
        if (s->refuse)
                return reject(s, reply, size);
        snprintf(reply, size, "OK %s\r\n", s->guid);
        s->state = PROXY_SASL_WAIT_BEGIN;
        return 1;
}

static bool is_cmd(const char *line, size_t len, const char *cmd, const char **arg, size_t *arglen)
{
        size_t n = strlen(cmd);

        if (len < n || memcmp(line, cmd, n) != 0)
                return false;
        if (len == n) {
                *arg = line + n;
                *arglen = 0;
                return true;
        }
        if (line[n] != ' ')
                return false;
        *arg = line + n + 1;
        *arglen = len - n - 1;
        return true;
}

static int handle_line(struct proxy_sasl *s, const char *line, size_t len, char *reply,
                       size_t size)
{
        const char *arg;
        size_t alen;

        reply[0] = 0;
        if (is_cmd(line, len, "AUTH", &arg, &alen)) {
                const char *resp;
                size_t rlen;

                if (s->state != PROXY_SASL_WAIT_AUTH)
                        goto error;
                if (!is_cmd(arg, alen, "EXTERNAL", &resp, &rlen))
                        return reject(s, reply, size);
                if (rlen == 0) {
                        if (s->refuse)
                                return reject(s, reply, size);
                        snprintf(reply, size, "DATA\r\n");
                        s->state = PROXY_SASL_WAIT_DATA;
                        return 1;
                }
                if (!identity_ok(s, resp, rlen))
                        return reject(s, reply, size);
                return ok(s, reply, size);
        }
        if (is_cmd(line, len, "DATA", &arg, &alen)) {
                if (s->state != PROXY_SASL_WAIT_DATA)
                        goto error;
                if (alen == 0)
                        return ok(s, reply, size);
                if (!identity_ok(s, arg, alen))
                        return reject(s, reply, size);
                return ok(s, reply, size);
        }
        if (is_cmd(line, len, "CANCEL", &arg, &alen) || is_cmd(line, len, "ERROR", &arg, &alen)) {
                if (s->state == PROXY_SASL_WAIT_AUTH && line[0] == 'C')
                        goto error;
                return reject(s, reply, size);
        }
        if (is_cmd(line, len, "NEGOTIATE_UNIX_FD", &arg, &alen) && alen == 0) {
                if (s->state != PROXY_SASL_WAIT_BEGIN)
                        goto error;
                s->unix_fd = true;
                snprintf(reply, size, "AGREE_UNIX_FD\r\n");
                return 1;
        }
        if (is_cmd(line, len, "BEGIN", &arg, &alen) && alen == 0) {
                if (s->state != PROXY_SASL_WAIT_BEGIN)
                        return -EPROTO;
                s->state = PROXY_SASL_DONE;
                return 2;
        }
error:
        snprintf(reply, size, "ERROR \"Unknown command\"\r\n");
        return 1;
}

int proxy_sasl_feed(struct proxy_sasl *s, const char *in, size_t len, size_t *consumed,
                    char *reply, size_t reply_size)
{
        size_t i;

        *consumed = 0;
        reply[0] = 0;
        if (s->state == PROXY_SASL_DONE)
                return -EPROTO;
        if (len == 0)
                return 0;
        if (s->state == PROXY_SASL_NUL) {
                if (in[0] != 0)
                        return -EPROTO;
                s->state = PROXY_SASL_WAIT_AUTH;
                *consumed = 1;
                return 1;
        }
        for (i = 0; i < len; i++) {
                unsigned char c = (unsigned char)in[i];

                if (c == '\n')
                        break;
                if (c == 0 || c >= 0x80 || (c < 0x20 && c != '\r' && c != '\t'))
                        return -EPROTO;
                if (i >= PROXY_SASL_MAX_LINE)
                        return -EPROTO;
        }
        if (i == len)
                return 0;
        if (i == 0 || in[i - 1] != '\r')
                return -EPROTO;
        *consumed = i + 1;
        return handle_line(s, in, i - 1, reply, reply_size);
}
