// SPDX-License-Identifier: GPL-2.0-or-later
/* sd_notify(3) READY=1: one datagram to $NOTIFY_SOCKET (see sd-notify.h) */

#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sd-notify.h"

void sd_notify_ready(void)
{
        static const char state[] = "READY=1";
        const char *path = getenv("NOTIFY_SOCKET");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        socklen_t len;
        int fd;

        if (!path || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(sa.sun_path))
                return;
        memcpy(sa.sun_path, path, strlen(path));
        if (path[0] == '@')
                sa.sun_path[0] = '\0';  /* abstract namespace */
        len = offsetof(struct sockaddr_un, sun_path) + strlen(path);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return;
        if (sendto(fd, state, sizeof(state) - 1, 0, (struct sockaddr *)&sa, len) < 0)
                perror("kdbus: sd_notify");
        close(fd);
}
