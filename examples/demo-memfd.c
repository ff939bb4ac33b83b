// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * demo-memfd: a large payload crosses the bus as a sealed memfd, without
 * being copied.
 *
 * A receiver connects with a deliberately small pool (1 MiB) and forks a
 * sender. The sender fills a memfd with SIZE MiB of pseudo-random data,
 * seals it and sends one D-Bus message org.example.Bulk.Data (signature
 * "tayay": a checksum, then the data as two byte arrays, since a D-Bus
 * array holds at most 64 MiB) to the receiver: the 88-byte-or-so D-Bus
 * header in a PAYLOAD_VEC, the body as a PAYLOAD_MEMFD item.
 *
 * The receiver finds the header in its pool and the body as a descriptor
 * (PAYLOAD_MEMFD), maps it, checks the checksum and shows why nothing was
 * copied: the pool slice is a few hundred bytes in a pool far smaller
 * than the payload, the descriptor is the sender's very memfd (same
 * inode, same name, sealed), and SEND/RECV took a tiny fraction of what
 * one memcpy of the payload takes.
 *
 * The connections use the kdbus ioctls directly (libkdbus would read the
 * memfd into memory; here the point is to see the descriptor); the D-Bus
 * header is marshalled with libkdbus.
 *
 *   demo-memfd [SIZE-MIB] [BUS-NODE]   (default 100, $KDBUS_BUS_PATH)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/kdbus.h>

#include "kdbus.h"

#define POOL_SIZE               (1024 * 1024)
#define ALIGN8(x)               (((x) + 7) & ~(uint64_t)7)
#define ITEM_HEADER_SIZE        offsetof(struct kdbus_item, data)
#define ITEM_NEXT(i)            ((struct kdbus_item *)((uint8_t *)(i) + ALIGN8((i)->size)))
#define MIB                     (1024.0 * 1024.0)

struct conn {
        int fd;
        uint64_t id;
        uint8_t *pool;
};

static double now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int die(const char *who, const char *what, int err)
{
        fprintf(stderr, "demo-memfd: %s: %s: %s\n", who, what, strerror(err));
        return 1;
}

static int pool_free(struct conn *c, uint64_t offset)
{
        struct kdbus_cmd_free cmd = { .size = sizeof(cmd), .offset = offset };

        return ioctl(c->fd, KDBUS_CMD_FREE, &cmd) < 0 ? -errno : 0;
}

static int conn_hello(struct conn *c, const char *path)
{
        struct kdbus_cmd_hello hello = {
                .size = sizeof(hello),
                .flags = KDBUS_HELLO_ACCEPT_FD,
                .pool_size = POOL_SIZE,
        };

        c->fd = open(path, O_RDWR | O_CLOEXEC);
        if (c->fd < 0)
                return -errno;
        if (ioctl(c->fd, KDBUS_CMD_HELLO, &hello) < 0)
                return -errno;
        c->pool = mmap(NULL, POOL_SIZE, PROT_READ, MAP_SHARED, c->fd, 0);
        if (c->pool == MAP_FAILED)
                return -errno;
        c->id = hello.id;
        return pool_free(c, hello.offset);
}

/* 64-bit words of pseudo-random data (xorshift64) */
static void fill(uint8_t *p, uint64_t size)
{
        uint64_t x = 0x9E3779B97F4A7C15ULL;

        for (uint64_t i = 0; i + 8 <= size; i += 8) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                memcpy(p + i, &x, 8);
        }
}

/* FNV-style over 64-bit words; @size is a multiple of 8 */
static uint64_t checksum(const uint8_t *p, uint64_t size, uint64_t h)
{
        for (uint64_t i = 0; i < size; i += 8) {
                uint64_t w;

                memcpy(&w, p + i, 8);
                h = (h ^ w) * 0x100000001B3ULL;
        }
        return h;
}

/*
 * Body layout (D-Bus "tayay", little-endian): t checksum at 0, u32 length
 * at 8, data at 12, u32 length at 12 + half, data at 16 + half.
 */
static uint64_t body_checksum(const uint8_t *body, uint64_t half)
{
        return checksum(body + 16 + half, half, checksum(body + 12, half, 0xCBF29CE484222325ULL));
}

static int run_sender(const char *path, uint64_t recv_id, uint64_t half)
{
        uint64_t body_size = 16 + 2 * half, csum, hlen;
        char dest[32], sender[32], name[64];
        struct kdbus_message *m = NULL;
        struct conn c;
        const uint8_t *hdr;
        struct stat st;
        _Alignas(8) static uint8_t msgbuf[1024];
        size_t msize;
        uint32_t len32 = (uint32_t)half, body32 = (uint32_t)body_size;
        struct kdbus_msg *msg;
        struct kdbus_item *item;
        struct kdbus_cmd_send cmd = { .size = sizeof(cmd) };
        double t0, t_send;
        uint8_t *p;
        int fd, r;

        r = conn_hello(&c, path);
        if (r < 0)
                return die("sender", "HELLO", -r);
        snprintf(name, sizeof(name), "demo-payload-%" PRIu64 "MiB", 2 * half >> 20);
        fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0 || ftruncate(fd, (off_t)body_size) < 0)
                return die("sender", "memfd", errno);
        p = mmap(NULL, body_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
                return die("sender", "mmap", errno);
        t0 = now_ms();
        fill(p, body_size);
        memcpy(p + 8, &len32, 4);
        memcpy(p + 12 + half, &len32, 4);
        csum = body_checksum(p, half);
        memcpy(p, &csum, 8);
        munmap(p, body_size);
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
                return die("sender", "F_ADD_SEALS", errno);
        fstat(fd, &st);
        printf("sender   :1.%" PRIu64 ": wrote %.0f MiB into memfd \"%s\" (inode %lu) in %.0f ms,\n"
               "                checksum %016" PRIx64 ", sealed it (no more writes, no resizing)\n",
               c.id, body_size / MIB, name, (unsigned long)st.st_ino, now_ms() - t0, csum);

        /* the D-Bus header, marshalled by libkdbus, with the body length patched in */
        snprintf(dest, sizeof(dest), ":1.%" PRIu64, recv_id);
        snprintf(sender, sizeof(sender), ":1.%" PRIu64, c.id);
        if (kdbus_message_new_signal(&m, "/org/example/Demo", "org.example.Bulk", "Data") < 0 ||
            kdbus_message_set_destination(m, dest) < 0 ||
            kdbus_message_append(m, "tayay", csum, 0u, 0u) < 0 ||
            kdbus_message_seal(m, 1, sender) < 0 ||
            kdbus_message_get_data(m, (const void **)&hdr, &msize) < 0)
                return die("sender", "marshalling the header", EINVAL);
        hlen = msize - 16;      /* the placeholder body: t, two empty arrays */
        {
                uint8_t header[hlen];

                memcpy(header, hdr, hlen);
                memcpy(header + 4, &body32, 4);

                memset(msgbuf, 0, sizeof(msgbuf));
                msg = (struct kdbus_msg *)msgbuf;
                msg->payload_type = KDBUS_PAYLOAD_DBUS;
                msg->dst_id = recv_id;
                msg->cookie = 1;
                item = msg->items;
                item->size = ITEM_HEADER_SIZE + sizeof(struct kdbus_vec);
                item->type = KDBUS_ITEM_PAYLOAD_VEC;
                item->vec.address = (uintptr_t)header;
                item->vec.size = hlen;
                item = ITEM_NEXT(item);
                item->size = ITEM_HEADER_SIZE + sizeof(struct kdbus_memfd);
                item->type = KDBUS_ITEM_PAYLOAD_MEMFD;
                item->memfd.start = 0;
                item->memfd.size = body_size;
                item->memfd.fd = fd;
                msg->size = (uint8_t *)ITEM_NEXT(item) - (uint8_t *)msg;

                cmd.msg_address = (uintptr_t)msg;
                t0 = now_ms();
                r = ioctl(c.fd, KDBUS_CMD_SEND, &cmd);
                t_send = now_ms() - t0;
                if (r < 0)
                        return die("sender", "KDBUS_CMD_SEND", errno);
        }
        printf("sender   :1.%" PRIu64 ": sent it to %s: a %" PRIu64 "-byte header (PAYLOAD_VEC) plus the\n"
               "                memfd (PAYLOAD_MEMFD); KDBUS_CMD_SEND took %.2f ms\n",
               c.id, dest, hlen, t_send);
        fflush(stdout);
        kdbus_message_unref(m);
        close(fd);
        close(c.fd);
        return 0;
}

static int run_receiver(struct conn *c, uint64_t half)
{
        struct kdbus_cmd_recv recv = { .size = sizeof(recv) };
        struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
        const struct kdbus_msg *msg;
        const struct kdbus_item *item;
        uint64_t body_size = 0, hdr_size = 0, csum_sent, csum;
        double t0, t_recv, t_sum, t_copy;
        char link[64], target[256] = "?";
        int fd = -1, seals;
        struct stat st;
        uint8_t *body, *copy;
        ssize_t n;

        if (poll(&pfd, 1, 60000) != 1)
                return die("receiver", "waiting for the message", ETIMEDOUT);
        t0 = now_ms();
        if (ioctl(c->fd, KDBUS_CMD_RECV, &recv) < 0)
                return die("receiver", "KDBUS_CMD_RECV", errno);
        t_recv = now_ms() - t0;
        msg = (const struct kdbus_msg *)(c->pool + recv.msg.offset);
        for (item = msg->items; (const uint8_t *)item < (const uint8_t *)msg + msg->size;
             item = ITEM_NEXT(item)) {
                if (item->type == KDBUS_ITEM_PAYLOAD_OFF && item->vec.offset != ~0ULL)
                        hdr_size += item->vec.size;
                else if (item->type == KDBUS_ITEM_PAYLOAD_MEMFD) {
                        fd = item->memfd.fd;
                        body_size = item->memfd.size;
                }
        }
        if (fd < 0 || body_size != 16 + 2 * half)
                return die("receiver", "the message has no memfd of the expected size", EBADMSG);
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, target, sizeof(target) - 1);
        target[n > 0 ? n : 0] = 0;
        fstat(fd, &st);
        seals = fcntl(fd, F_GET_SEALS);
        printf("receiver :1.%" PRIu64 ": KDBUS_CMD_RECV took %.2f ms; the message occupies %" PRIu64
               " bytes of its\n                %d KiB pool (%" PRIu64 "-byte header inline) and the body arrived as fd %d:\n"
               "                %s, inode %lu, %.0f MiB, seals %s\n",
               c->id, t_recv, (uint64_t)recv.msg.msg_size, POOL_SIZE / 1024, hdr_size, fd, target,
               (unsigned long)st.st_ino, body_size / MIB,
               (seals & F_SEAL_WRITE) && (seals & F_SEAL_SHRINK) ? "write+shrink+grow+seal" : "MISSING");
        if (!(seals & F_SEAL_WRITE) || !(seals & F_SEAL_SHRINK))
                return die("receiver", "the memfd is not sealed", EPERM);

        body = mmap(NULL, body_size, PROT_READ, MAP_SHARED, fd, 0);
        if (body == MAP_FAILED)
                return die("receiver", "mmap", errno);
        t0 = now_ms();
        memcpy(&csum_sent, body, 8);
        csum = body_checksum(body, half);
        t_sum = now_ms() - t0;
        printf("receiver :1.%" PRIu64 ": mapped it read-only and checked it in %.0f ms: checksum %016" PRIx64 " %s\n",
               c->id, t_sum, csum, csum == csum_sent ? "matches" : "DOES NOT MATCH");

        /* for scale: what a single copy of the payload costs here */
        copy = malloc(body_size);
        if (!copy)
                return die("receiver", "malloc", ENOMEM);
        memset(copy, 1, body_size);
        t0 = now_ms();
        memcpy(copy, body, body_size);
        __asm__ volatile("" : : "r"(copy) : "memory");  /* keep the copy */
        t_copy = now_ms() - t0;
        printf("receiver :1.%" PRIu64 ": for scale, one memcpy of those %.0f MiB takes %.0f ms here;\n"
               "                handing them over took SEND + RECV above: the bytes were never copied\n",
               c->id, body_size / MIB, t_copy);
        free(copy);
        munmap(body, body_size);
        close(fd);
        pool_free(c, recv.msg.offset);
        return csum == csum_sent ? 0 : 1;
}

int main(int argc, char **argv)
{
        uint64_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 100;
        const char *path = argc > 2 ? argv[2] : getenv("KDBUS_BUS_PATH");
        uint64_t half = mib << 19;      /* two arrays of SIZE/2 MiB */
        struct conn recv_conn;
        int status, r, rs;
        pid_t pid;

        if (!path) {
                fprintf(stderr, "usage: demo-memfd [SIZE-MIB] BUS-NODE (or $KDBUS_BUS_PATH)\n");
                return 2;
        }
        if (mib < 2 || mib > 120) {
                fprintf(stderr, "demo-memfd: SIZE-MIB must be 2..120 (D-Bus messages stop at 128 MiB)\n");
                return 2;
        }
        r = conn_hello(&recv_conn, path);
        if (r < 0)
                return die("receiver", "HELLO", -r);
        fflush(stdout);
        pid = fork();
        if (pid < 0)
                return die("receiver", "fork", errno);
        if (pid == 0) {
                close(recv_conn.fd);
                _exit(run_sender(path, recv_conn.id, half));
        }
        r = run_receiver(&recv_conn, half);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        rs = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
        return r || rs;
}
