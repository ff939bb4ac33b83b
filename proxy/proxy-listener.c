// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kdbus-proxy listening sockets: unix:path= and unix:abstract= addresses,
 * sockets passed by systemd (LISTEN_FDS), accept4 with the peer's
 * credentials (SO_PEERCRED, SO_PEERSEC, SO_PEERGROUPS).
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "proxy.h"

static int unescape(const char *in, size_t len, char *out, size_t size)
{
        size_t n = 0;

        for (size_t i = 0; i < len; i++) {
                char c = in[i];

                if (c == '%') {
                        unsigned int v;

                        if (i + 2 >= len)
                                return -EINVAL;
                        if (sscanf(in + i + 1, "%2x", &v) != 1)
                                return -EINVAL;
                        c = (char)v;
                        i += 2;
                }
                if (n + 1 >= size)
                        return -ENAMETOOLONG;
                out[n++] = c;
        }
        out[n] = 0;
        return (int)n;
}

static int add_listener(struct proxy *p, int fd, const char *path)
{
        struct proxy_listener *v, *l;
        int r;

        v = realloc(p->listeners, (p->n_listeners + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        p->listeners = v;
        l = &v[p->n_listeners];
        memset(l, 0, sizeof(*l));
        l->watch.kind = WATCH_LISTENER;
        l->watch.fd = fd;
        l->path = path ? strdup(path) : NULL;
        p->n_listeners++;
        (void)r;
        return 0;
}

static void mkdir_parent(const char *path)
{
        char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
        char *slash;

        snprintf(dir, sizeof(dir), "%s", path);
        slash = strrchr(dir, '/');
        if (!slash || slash == dir)
                return;
        *slash = 0;
        if (mkdir(dir, 0755) < 0 && errno == ENOENT) {
                mkdir_parent(dir);
                mkdir(dir, 0755);
        }
}

/* "unix:path=..." or "unix:abstract=..." (other keys ignored) */
int proxy_listen_address(struct proxy *p, const char *address, mode_t mode)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *kv, *end;
        char path[sizeof(sa.sun_path)];
        bool abstract = false, have = false;
        socklen_t salen;
        int fd, r;

        if (strncmp(address, "unix:", 5) != 0)
                return -EAFNOSUPPORT;
        for (kv = address + 5; *kv; kv = *end ? end + 1 : end) {
                const char *eq;

                end = strchr(kv, ',');
                if (!end)
                        end = kv + strlen(kv);
                eq = memchr(kv, '=', (size_t)(end - kv));
                if (!eq)
                        return -EINVAL;
                if ((size_t)(eq - kv) == 4 && memcmp(kv, "path", 4) == 0) {
                        abstract = false;
                } else if ((size_t)(eq - kv) == 8 && memcmp(kv, "abstract", 8) == 0) {
                        abstract = true;
                } else {
                        continue;
                }
                r = unescape(eq + 1, (size_t)(end - eq - 1), path, sizeof(path) - 1);
                if (r <= 0)
                        return r < 0 ? r : -EINVAL;
                have = true;
        }
        if (!have)
                return -EINVAL;
        if (abstract) {
                sa.sun_path[0] = 0;
                memcpy(sa.sun_path + 1, path, strlen(path));
                salen = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(path);
        } else {
                memcpy(sa.sun_path, path, strlen(path) + 1);
                salen = sizeof(sa);
                mkdir_parent(path);
                unlink(path);
        }
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        {
                mode_t old = umask(0);

                r = bind(fd, (struct sockaddr *)&sa, salen);
                umask(old);
        }
        if (r < 0 || (!abstract && chmod(path, mode) < 0) || listen(fd, SOMAXCONN) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        r = add_listener(p, fd, abstract ? NULL : path);
        if (r < 0)
                close(fd);
        return r;
}

/* sockets passed with LISTEN_FDS/LISTEN_PID; returns their number */
int proxy_listen_inherited(struct proxy *p)
{
        const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
        int n, r;

        if (!pid || !fds || strtol(pid, NULL, 10) != getpid())
                return 0;
        n = (int)strtol(fds, NULL, 10);
        if (n <= 0 || n > 64)
                return 0;
        for (int i = 0; i < n; i++) {
                int fd = 3 + i;

                fcntl(fd, F_SETFD, FD_CLOEXEC);
                fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
                r = add_listener(p, fd, NULL);
                if (r < 0)
                        return r;
        }
        unsetenv("LISTEN_PID");
        unsetenv("LISTEN_FDS");
        unsetenv("LISTEN_FDNAMES");
        return n;
}

void proxy_accept(struct proxy *p, struct proxy_listener *l)
{
        for (int i = 0; i < 64; i++) {
                struct proxy_client *c;
                struct ucred cred;
                socklen_t len = sizeof(cred);
                char label[4096];
                gid_t groups[256];
                int fd;

                fd = accept4(l->watch.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0) {
                        if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                                fprintf(stderr, "kdbus-proxy: accept: %m\n");
                        return;
                }
                if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
                        close(fd);
                        continue;
                }
                c = proxy_client_new(p, fd);
                if (!c) {
                        close(fd);
                        continue;
                }
                c->uid = cred.uid;
                c->gid = cred.gid;
                c->pid = cred.pid;
                len = sizeof(label) - 1;
                if (getsockopt(fd, SOL_SOCKET, SO_PEERSEC, label, &len) == 0 && len > 0) {
                        label[len] = 0;
                        if (strlen(label) > 0)
                                c->seclabel = strdup(label);
                }
#ifdef SO_PEERGROUPS
                len = sizeof(groups);
                if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == 0 && len) {
                        c->groups = malloc(len);
                        if (c->groups) {
                                memcpy(c->groups, groups, len);
                                c->n_groups = len / sizeof(gid_t);
                        }
                }
#endif
                proxy_client_start(c);
        }
}

void proxy_listeners_close(struct proxy *p)
{
        for (size_t i = 0; i < p->n_listeners; i++) {
                close(p->listeners[i].watch.fd);
                if (p->listeners[i].path)
                        unlink(p->listeners[i].path);
                free(p->listeners[i].path);
        }
        free(p->listeners);
        p->listeners = NULL;
        p->n_listeners = 0;
}
