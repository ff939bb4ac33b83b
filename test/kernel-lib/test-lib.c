// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-lib: libkdbus against the real module, run in the VM. Prints TAP.
 *
 * One bus is created; a forked service process answers method calls on
 * /org/example/obj (Echo, Fail, Sleep, ReadFd, Sum, Big) and the parent
 * drives the library: sync and async calls, errors, timeouts, fds,
 * memfd payloads, the local driver (with queued owners, credentials, an
 * activator for ListActivatableNames and StartServiceByName, Introspect),
 * pool FREE discipline, names, matches and notifications. Tests that need kernel features which are
 * not there (ENOTTY) report SKIP.
 *
 *   test-lib [KDBUSFS-ROOT]      (default /sys/fs/kdbus)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kdbus.h>

#include "kdbus.h"

#define SERVICE_NAME    "org.example.Service"
#define OBJ             "/org/example/obj"
#define IFACE           "org.example.Iface"

static int n_test, n_fail;
static const char *root = "/sys/fs/kdbus";
static char *bus_path;
static char service_unique[64];

static void ok(bool cond, const char *fmt, ...)
{
        va_list ap;

        printf("%sok %d - ", cond ? "" : "not ", ++n_test);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
        if (!cond)
                n_fail++;
        fflush(stdout);
}

static void skip(const char *fmt, ...)
{
        va_list ap;

        printf("ok %d - # SKIP ", ++n_test);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
        fflush(stdout);
}

static void diag(const char *fmt, ...)
{
        va_list ap;

        printf("# ");
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
        fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* the service (child process) */

static bool service_quit;

static int service_method(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata)
{
        const char *member = kdbus_message_get_member(m);
        const char *iface = kdbus_message_get_interface(m);

        (void)userdata;
        if (!iface || strcmp(iface, IFACE) != 0)
                return 0;
        if (strcmp(member, "Echo") == 0) {
                const char *s;

                if (kdbus_message_read(m, "s", &s) < 0)
                        return -EINVAL;
                return kdbus_bus_reply(bus, m, "s", s) < 0 ? -EIO : 1;
        }
        if (strcmp(member, "Fail") == 0) {
                kdbus_bus_reply_error(bus, m, "org.example.Error.Broken", "it is broken");
                return 1;
        }
        if (strcmp(member, "Errno") == 0)
                return -EACCES;
        if (strcmp(member, "Sleep") == 0)
                return 1;       /* never answers */
        if (strcmp(member, "ReadFd") == 0) {
                char buf[64] = { 0 };
                int fd;

                if (kdbus_message_read(m, "h", &fd) < 0)
                        return -EINVAL;
                if (read(fd, buf, sizeof(buf) - 1) < 0)
                        return -errno;
                return kdbus_bus_reply(bus, m, "s", buf) < 0 ? -EIO : 1;
        }
        if (strcmp(member, "Sum") == 0) {
                const void *p;
                size_t n;
                uint64_t sum = 0;
                int r;

                r = kdbus_message_read_array(m, 'y', &p, &n);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n; i++)
                        sum += ((const uint8_t *)p)[i];
                return kdbus_bus_reply(bus, m, "tt", (uint64_t)n, sum) < 0 ? -EIO : 1;
        }
        if (strcmp(member, "Big") == 0) {
                struct kdbus_message *reply;
                uint32_t size;
                uint8_t *buf;
                int r;

                if (kdbus_message_read(m, "u", &size) < 0)
                        return -EINVAL;
                buf = malloc(size ? size : 1);
                if (!buf)
                        return -ENOMEM;
                for (uint32_t i = 0; i < size; i++)
                        buf[i] = (uint8_t)(i * 7);
                r = kdbus_message_new_method_return(&reply, m);
                if (r >= 0)
                        r = kdbus_message_append_array(reply, 'y', buf, size);
                if (r >= 0)
                        r = kdbus_bus_send(bus, reply, NULL);
                kdbus_message_unref(reply);
                free(buf);
                return r < 0 ? r : 1;
        }
        if (strcmp(member, "Emit") == 0) {
                const char *a0;

                if (kdbus_message_read(m, "s", &a0) < 0)
                        return -EINVAL;
                kdbus_bus_emit_signal(bus, NULL, OBJ, "org.example.Sig", "Changed", "su", a0, 7);
                return kdbus_bus_reply(bus, m, "") < 0 ? -EIO : 1;
        }
        if (strcmp(member, "Quit") == 0) {
                service_quit = true;
                kdbus_bus_reply(bus, m, "");
                return 1;
        }
        return 0;
}

static int run_service(int ready_fd)
{
        struct kdbus_bus *bus = NULL;
        char msg[128];
        int r, names;

        r = kdbus_bus_open(&bus, bus_path);
        if (r < 0) {
                dprintf(ready_fd, "ERR %d\n", r);
                return 1;
        }
        kdbus_bus_add_object(bus, NULL, OBJ, service_method, NULL);
        names = kdbus_bus_request_name(bus, SERVICE_NAME, 0);
        snprintf(msg, sizeof(msg), "%s %d\n", kdbus_bus_get_unique_name(bus), names);
        if (write(ready_fd, msg, strlen(msg)) < 0)
                return 1;
        close(ready_fd);
        r = kdbus_bus_run_until(bus, &service_quit, 120ULL * 1000000);
        /* let the Quit reply go out before closing */
        kdbus_bus_unref(bus);
        return r < 0 ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* the client side */

struct async_result {
        bool done;
        struct kdbus_message *reply;
};

static int on_reply(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata)
{
        struct async_result *res = userdata;

        (void)bus;
        res->done = true;
        res->reply = kdbus_message_ref(m);
        return 1;
}

static int call_async(struct kdbus_bus *bus, const char *dest, const char *member,
                      uint64_t timeout, struct async_result *res, const char *types, ...)
{
        struct kdbus_message *m;
        va_list ap;
        int r;

        memset(res, 0, sizeof(*res));
        r = kdbus_message_new_method_call(&m, dest, OBJ, IFACE, member);
        if (r < 0)
                return r;
        if (types) {
                va_start(ap, types);
                r = kdbus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r >= 0)
                r = kdbus_bus_call_async(bus, NULL, m, on_reply, res, timeout);
        kdbus_message_unref(m);
        if (r < 0)
                return r;
        return kdbus_bus_run_until(bus, &res->done, 30ULL * 1000000);
}

static void test_calls(struct kdbus_bus *a)
{
        struct kdbus_error err = KDBUS_ERROR_NULL;
        struct kdbus_message *reply = NULL;
        struct async_result res;
        const char *s = NULL;
        int r;

        r = kdbus_bus_call_method(a, service_unique, OBJ, IFACE, "Echo", &err, &reply, "s",
                                  "hello kdbus");
        ok(r == 0 && reply && kdbus_message_read(reply, "s", &s) == 0 &&
           strcmp(s, "hello kdbus") == 0, "sync call to the unique name returns the echo (r=%d %s)",
           r, err.name ? err.name : "");
        ok(reply && strcmp(kdbus_message_get_sender(reply), service_unique) == 0 &&
           strcmp(kdbus_message_get_destination(reply), kdbus_bus_get_unique_name(a)) == 0,
           "reply header: SENDER and DESTINATION normalised from kdbus");
        reply = kdbus_message_unref(reply);
        kdbus_error_free(&err);

        r = call_async(a, service_unique, "Echo", 0, &res, "s", "async");
        ok(r == 0 && res.reply && kdbus_message_get_type(res.reply) == KDBUS_MESSAGE_METHOD_RETURN &&
           kdbus_message_read(res.reply, "s", &s) == 0 && strcmp(s, "async") == 0,
           "async call completes through process() (r=%d)", r);
        kdbus_message_unref(res.reply);

        r = kdbus_bus_call_method(a, service_unique, OBJ, IFACE, "Fail", &err, NULL, "");
        ok(r == -EIO && err.name && strcmp(err.name, "org.example.Error.Broken") == 0 &&
           err.message && strcmp(err.message, "it is broken") == 0,
           "error reply: name and text reach the caller (r=%d)", r);
        kdbus_error_free(&err);

        r = kdbus_bus_call_method(a, service_unique, OBJ, IFACE, "Errno", &err, NULL, "");
        ok(r == -EPERM && err.name && strcmp(err.name, "org.freedesktop.DBus.Error.AccessDenied") == 0,
           "handler EACCES becomes AccessDenied, which maps back to EPERM (r=%d)", r);
        kdbus_error_free(&err);

        r = kdbus_bus_call_method(a, service_unique, OBJ, IFACE, "Nope", &err, NULL, "");
        ok(r < 0 && err.name && strcmp(err.name, "org.freedesktop.DBus.Error.UnknownMethod") == 0,
           "unknown method gives UnknownMethod (%s)", err.name ? err.name : "-");
        kdbus_error_free(&err);

        r = kdbus_bus_call_method(a, service_unique, "/no/such", IFACE, "Echo", &err, NULL, "s", "x");
        ok(r < 0 && err.name && strcmp(err.name, "org.freedesktop.DBus.Error.UnknownObject") == 0,
           "unknown object gives UnknownObject (%s)", err.name ? err.name : "-");
        kdbus_error_free(&err);

        r = kdbus_bus_call_method(a, service_unique, "/", "org.freedesktop.DBus.Peer", "Ping", &err,
                                  NULL, "");
        ok(r == 0, "Peer.Ping is answered automatically by the peer's library (r=%d)", r);
        kdbus_error_free(&err);

        r = kdbus_bus_call_method(a, ":1.999999", OBJ, IFACE, "Echo", &err, NULL, "s", "x");
        ok(r == -ENXIO && err.name && strcmp(err.name, "org.freedesktop.DBus.Error.ServiceUnknown") == 0,
           "call to a missing unique name: ENXIO and ServiceUnknown (r=%d)", r);
        kdbus_error_free(&err);

        r = kdbus_bus_call_method(a, ":2.5", OBJ, IFACE, "Echo", &err, NULL, "s", "x");
        ok(r == -ENXIO, "unparsable unique name fails like ENXIO without the kernel (r=%d)", r);
        kdbus_error_free(&err);

        {
                struct kdbus_message *m;

                kdbus_message_new_method_call(&m, service_unique, OBJ, IFACE, "Sleep");
                r = kdbus_bus_call(a, m, 300 * 1000, &err, NULL);
                kdbus_message_unref(m);
                ok(r == -ETIMEDOUT && err.name &&
                   strcmp(err.name, "org.freedesktop.DBus.Error.NoReply") == 0,
                   "sync call timeout: ETIMEDOUT and NoReply (r=%d)", r);
                kdbus_error_free(&err);
        }

        r = call_async(a, service_unique, "Sleep", 300 * 1000, &res, NULL);
        ok(r == 0 && res.reply && kdbus_message_get_type(res.reply) == KDBUS_MESSAGE_ERROR &&
           strcmp(kdbus_message_get_error_name(res.reply), "org.freedesktop.DBus.Error.NoReply") == 0 &&
           strcmp(kdbus_message_get_sender(res.reply), "org.freedesktop.DBus") == 0,
           "async call timeout: REPLY_TIMEOUT becomes a NoReply error from the driver (r=%d)", r);
        kdbus_message_unref(res.reply);
}

static void test_fds_memfd(struct kdbus_bus *a)
{
        struct kdbus_error err = KDBUS_ERROR_NULL;
        struct kdbus_message *reply = NULL, *m;
        const char *s = NULL;
        int p[2], r;

        if (pipe2(p, O_CLOEXEC) < 0)
                return;
        if (write(p[1], "through a pipe", 14) != 14)
                return;
        close(p[1]);
        r = kdbus_bus_call_method(a, service_unique, OBJ, IFACE, "ReadFd", &err, &reply, "h", p[0]);
        close(p[0]);
        ok(r == 0 && kdbus_message_read(reply, "s", &s) == 0 && strcmp(s, "through a pipe") == 0,
           "fd passing: the service reads our pipe (r=%d %s)", r, err.name ? err.name : "");
        reply = kdbus_message_unref(reply);
        kdbus_error_free(&err);

        {
                size_t size = 3 * 1024 * 1024;
                uint8_t *buf = malloc(size);
                uint64_t n = 0, sum = 0, want = 0;

                for (size_t i = 0; i < size; i++) {
                        buf[i] = (uint8_t)(i * 13);
                        want += buf[i];
                }
                kdbus_message_new_method_call(&m, service_unique, OBJ, IFACE, "Sum");
                kdbus_message_append_array(m, 'y', buf, size);
                r = kdbus_bus_call(a, m, 0, &err, &reply);
                kdbus_message_unref(m);
                free(buf);
                ok(r == 0 && kdbus_message_read(reply, "tt", &n, &sum) == 0 && n == size &&
                   sum == want,
                   "3 MiB request (above the 2 MiB VEC limit) crosses as a memfd (r=%d)", r);
                reply = kdbus_message_unref(reply);
                kdbus_error_free(&err);
        }
        {
                const void *ptr = NULL;
                size_t n = 0;
                bool good = true;

                r = kdbus_bus_call_method(a, service_unique, OBJ, IFACE, "Big", &err, &reply, "u",
                                          (uint32_t)(1024 * 1024));
                if (r == 0 && kdbus_message_read_array(reply, 'y', &ptr, &n) >= 0 && n == 1024 * 1024) {
                        for (size_t i = 0; i < n; i++)
                                if (((const uint8_t *)ptr)[i] != (uint8_t)(i * 7))
                                        good = false;
                } else {
                        good = false;
                }
                ok(good, "1 MiB reply comes back through a memfd intact (r=%d)", r);
                reply = kdbus_message_unref(reply);
                kdbus_error_free(&err);
        }
}

static void test_driver(struct kdbus_bus *a)
{
        struct kdbus_error err = KDBUS_ERROR_NULL;
        struct kdbus_message *reply = NULL;
        const char *s = NULL;
        char id[33];
        int r;

        kdbus_bus_get_bus_id(a, id);
        r = kdbus_bus_call_method(a, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                  "org.freedesktop.DBus", "GetId", &err, &reply, "");
        ok(r == 0 && kdbus_message_read(reply, "s", &s) == 0 && strcmp(s, id) == 0,
           "driver GetId is answered locally with the bus id128 (%s)", id);
        reply = kdbus_message_unref(reply);

        r = kdbus_bus_call_method(a, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                  "org.freedesktop.DBus", "Hello", &err, NULL, "");
        ok(r < 0 && err.name && strcmp(err.name, "org.freedesktop.DBus.Error.Failed") == 0,
           "a second Hello gets Failed");
        kdbus_error_free(&err);

        r = kdbus_bus_call_method(a, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                  "org.freedesktop.DBus", "NoSuch", &err, NULL, "");
        ok(r < 0 && err.name && strcmp(err.name, "org.freedesktop.DBus.Error.UnknownMethod") == 0,
           "unknown driver method gets UnknownMethod");
        kdbus_error_free(&err);
}

/* a started connection with a 64 KiB pool; @payload: a string of @fill */
static int small_pool_bus(struct kdbus_bus **small, char *payload, size_t size, char fill)
{
        int r;

        memset(payload, fill, size - 1);
        payload[size - 1] = 0;
        r = kdbus_bus_new(small);
        if (r >= 0)
                r = kdbus_bus_set_address(*small, bus_path);
        if (r >= 0)
                r = kdbus_bus_set_pool_size(*small, 64 * 1024);
        if (r >= 0)
                r = kdbus_bus_start(*small);
        return r;
}

static void test_pool_discipline(void)
{
        struct kdbus_error err = KDBUS_ERROR_NULL;
        struct kdbus_bus *small = NULL;
        char payload[2048];
        int r = 0, i;

        r = small_pool_bus(&small, payload, sizeof(payload), 'x');
        for (i = 0; r >= 0 && i < 300; i++) {
                struct kdbus_message *reply = NULL;

                r = kdbus_bus_call_method(small, service_unique, OBJ, IFACE, "Echo", &err, &reply,
                                          "s", payload);
                kdbus_message_unref(reply);
                kdbus_error_free(&err);
                if (r >= 0 && i % 3 == 0) {
                        char **names = NULL;

                        r = kdbus_bus_list_names(small, &names);
                        kdbus_strv_free(names);
                        if (r == -ENOTTY || r == -EOPNOTSUPP)
                                r = 0;
                }
        }
        ok(r >= 0 && i == 300,
           "300 calls with 2 KiB replies through a 64 KiB pool: every slice freed (i=%d r=%d)", i, r);
        kdbus_bus_unref(small);
}

static int count_filter(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata)
{
        (void)bus;
        (void)m;
        (*(int *)userdata)++;
        return 0;
}

/*
 * The event loop frees a received slice after the handlers ran: 300
 * unicast signals of 2 KiB, each dispatched by kdbus_bus_process(), through
 * a 64 KiB pool (a slice left behind fills it after about 30).
 */
static void test_pool_discipline_receiver(struct kdbus_bus *a)
{
        struct kdbus_bus *small = NULL;
        struct kdbus_slot *slot = NULL;
        char payload[2048];
        int r = 0, i, seen = 0;

        r = small_pool_bus(&small, payload, sizeof(payload), 'y');
        if (r >= 0)
                r = kdbus_bus_add_filter(small, &slot, count_filter, &seen);
        for (i = 0; r >= 0 && i < 300; i++) {
                struct kdbus_message *m = NULL;

                r = kdbus_message_new_signal(&m, OBJ, IFACE, "Bulk");
                if (r >= 0)
                        r = kdbus_message_set_destination(m, kdbus_bus_get_unique_name(small));
                if (r >= 0)
                        r = kdbus_message_append(m, "s", payload);
                if (r >= 0)
                        r = kdbus_bus_send(a, m, NULL);
                kdbus_message_unref(m);
                while (r >= 0 && (r = kdbus_bus_process(small)) > 0)
                        ;
        }
        ok(r >= 0 && i == 300 && seen == 300,
           "300 signals of 2 KiB dispatched through a 64 KiB pool: every slice freed (i=%d seen=%d r=%d)",
           i, seen, r);
        kdbus_slot_unref(slot);
        kdbus_bus_unref(small);
}

static void test_names(struct kdbus_bus *a, int service_names)
{
        struct kdbus_error err = KDBUS_ERROR_NULL;
        struct kdbus_message *reply = NULL;
        const char *s = NULL;
        char *owner = NULL;
        int r;

        if (service_names == -ENOTTY || service_names == -EOPNOTSUPP) {
                skip("names: kernel has no NAME_ACQUIRE yet (%d)", service_names);
                return;
        }
        ok(service_names == KDBUS_REQUEST_NAME_PRIMARY_OWNER,
           "service RequestName: PRIMARY_OWNER (%d)", service_names);
        r = kdbus_bus_call_method(a, SERVICE_NAME, OBJ, IFACE, "Echo", &err, &reply, "s", "byname");
        ok(r == 0 && kdbus_message_read(reply, "s", &s) == 0 && strcmp(s, "byname") == 0 &&
           strcmp(kdbus_message_get_sender(reply), service_unique) == 0,
           "call by well-known name (DST_NAME) reaches the service (r=%d)", r);
        reply = kdbus_message_unref(reply);
        kdbus_error_free(&err);

        r = kdbus_bus_get_name_owner(a, SERVICE_NAME, &owner);
        ok(r == 0 && owner && strcmp(owner, service_unique) == 0, "GetNameOwner via CONN_INFO (r=%d)", r);
        free(owner);

        r = kdbus_bus_request_name(a, SERVICE_NAME, KDBUS_NAME_FLAG_DO_NOT_QUEUE);
        ok(r == KDBUS_REQUEST_NAME_EXISTS, "taken name with DO_NOT_QUEUE: EXISTS (%d)", r);
        r = kdbus_bus_request_name(a, SERVICE_NAME, 0);
        ok(r == KDBUS_REQUEST_NAME_IN_QUEUE, "taken name without flags: IN_QUEUE (%d)", r);
        r = kdbus_bus_request_name(a, SERVICE_NAME, KDBUS_NAME_FLAG_DO_NOT_QUEUE);
        ok(r == KDBUS_REQUEST_NAME_EXISTS, "queued, again with DO_NOT_QUEUE: EXISTS, leaves queue (%d)", r);
        r = kdbus_bus_release_name(a, SERVICE_NAME);
        ok(r == KDBUS_RELEASE_NAME_NOT_OWNER, "release of a name we do not hold: NOT_OWNER (%d)", r);
        r = kdbus_bus_release_name(a, "org.example.Nobody");
        ok(r == KDBUS_RELEASE_NAME_NON_EXISTENT, "release of an unknown name: NON_EXISTENT (%d)", r);
        r = kdbus_bus_request_name(a, "org.example.Mine", 0);
        ok(r == KDBUS_REQUEST_NAME_PRIMARY_OWNER, "free name: PRIMARY_OWNER (%d)", r);
        r = kdbus_bus_request_name(a, "org.example.Mine", 0);
        ok(r == KDBUS_REQUEST_NAME_ALREADY_OWNER, "own name again: ALREADY_OWNER (%d)", r);
        r = kdbus_bus_request_name(a, ":1.5", 0);
        ok(r == -EINVAL, "unique names cannot be requested (%d)", r);
        r = kdbus_bus_release_name(a, "org.example.Mine");
        ok(r == KDBUS_RELEASE_NAME_RELEASED, "release: RELEASED (%d)", r);
}

struct sig_count {
        int n;
        int noc;
        char last_arg0[64];
};

static int on_signal(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata)
{
        struct sig_count *c = userdata;
        const char *s;

        (void)bus;
        c->n++;
        if (kdbus_message_read(m, "s", &s) >= 0)
                snprintf(c->last_arg0, sizeof(c->last_arg0), "%s", s);
        return 1;
}

static void drain(struct kdbus_bus *bus)
{
        while (kdbus_bus_process(bus) > 0)
                ;
}

struct md_seen {
        int n;
        bool has_creds, has_pids;
        uint64_t uid, pid;
        bool service_name;
};

static int on_signal_md(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata)
{
        const struct kdbus_metadata *md = kdbus_bus_get_current_metadata(bus);
        struct md_seen *c = userdata;

        (void)m;
        c->n++;
        c->has_creds = md && md->has_creds;
        c->has_pids = md && md->has_pids;
        c->uid = md ? md->uid : 0;
        c->pid = md ? md->pid : 0;
        c->service_name = false;
        for (size_t i = 0; md && i < md->n_names; i++)
                if (strcmp(md->names[i], SERVICE_NAME) == 0)
                        c->service_name = true;
        return 1;
}

/* a signal from the service, as @a's handler sees its metadata */
static int emit_md(struct kdbus_bus *a, struct md_seen *c)
{
        struct kdbus_error err = KDBUS_ERROR_NULL;
        int r;

        memset(c, 0, sizeof(*c));
        r = kdbus_bus_call_method(a, service_unique, OBJ, IFACE, "Emit", &err, NULL, "s", "md");
        kdbus_error_free(&err);
        drain(a);
        return r;
}

/*
 * The metadata a connection receives: by default nothing (libkdbus(3));
 * the sender's names once a match rule on a well-known sender needs them,
 * and then for good; CREDS and PIDS once asked for, also on a running
 * connection (KDBUS_CMD_UPDATE).
 */
static void test_attach_recv(struct kdbus_bus *a, pid_t service_pid)
{
        struct kdbus_slot *slot = NULL;
        struct md_seen c;
        int r;

        r = kdbus_bus_add_match(a, &slot, "type='signal',interface='org.example.Sig',arg0='md'",
                                on_signal_md, &c);
        if (r == -ENOTTY || r == -EOPNOTSUPP) {
                skip("attach flags: kernel has no MATCH_ADD yet (%d)", r);
                return;
        }
        r = emit_md(a, &c);
        ok(r == 0 && c.n == 1 && !c.has_creds && !c.has_pids && !c.service_name,
           "default attach flags: no metadata at all (n=%d creds=%d pids=%d name=%d)",
           c.n, c.has_creds, c.has_pids, c.service_name);
        kdbus_slot_unref(slot);

        r = kdbus_bus_add_match(a, &slot, "type='signal',sender='" SERVICE_NAME "',"
                                "interface='org.example.Sig',arg0='md'", on_signal_md, &c);
        ok(r == 0, "add_match on a well-known sender (r=%d)", r);
        r = emit_md(a, &c);
        ok(r == 0 && c.n == 1 && !c.has_creds && !c.has_pids && c.service_name,
           "it matches: the signal carries the sender's names (n=%d creds=%d pids=%d name=%d)",
           c.n, c.has_creds, c.has_pids, c.service_name);

        r = kdbus_bus_set_attach_recv(a, KDBUS_ATTACH_CREDS | KDBUS_ATTACH_PIDS);
        ok(r == 0, "set_attach_recv(CREDS|PIDS) on a running connection (r=%d)", r);
        r = emit_md(a, &c);
        ok(r == 0 && c.n == 1 && c.has_creds && c.uid == (uint64_t)getuid() && c.has_pids &&
           c.pid == (uint64_t)service_pid && c.service_name,
           "then the signal carries the service's uid %llu and pid %llu (creds=%d pids=%d)",
           (unsigned long long)c.uid, (unsigned long long)c.pid, c.has_creds, c.has_pids);

        r = kdbus_bus_set_attach_recv(a, 0);
        ok(r == 0, "set_attach_recv(0) (r=%d)", r);
        r = emit_md(a, &c);
        ok(r == 0 && c.n == 1 && !c.has_creds && !c.has_pids && c.service_name,
           "back to names only: the match rule still needs them (creds=%d pids=%d name=%d)",
           c.has_creds, c.has_pids, c.service_name);
        kdbus_slot_unref(slot);
}

static void test_signals(struct kdbus_bus *a, struct kdbus_bus *b)
{
        struct kdbus_error err = KDBUS_ERROR_NULL;
        struct sig_count ca = { 0 }, cb = { 0 }, cn = { 0 };
        struct kdbus_slot *sa = NULL, *sb = NULL, *sn = NULL;
        struct kdbus_bus *d = NULL;
        char dname[64] = "";
        int r;

        r = kdbus_bus_add_match(a, &sa, "type='signal',interface='org.example.Sig',arg0='yes'",
                                on_signal, &ca);
        if (r == -ENOTTY || r == -EOPNOTSUPP) {
                skip("signals and matches: kernel has no MATCH_ADD yet (%d)", r);
                return;
        }
        ok(r == 0, "add_match compiles a rule into kernel matches (r=%d)", r);
        r = kdbus_bus_add_match(b, &sb, "type='signal',interface='org.example.Sig',arg0='no'",
                                on_signal, &cb);
        ok(r == 0, "second subscriber with another arg0 (r=%d)", r);

        r = kdbus_bus_call_method(a, service_unique, OBJ, IFACE, "Emit", &err, NULL, "s", "yes");
        kdbus_error_free(&err);
        drain(a);
        drain(b);
        ok(r == 0 && ca.n == 1 && strcmp(ca.last_arg0, "yes") == 0 && cb.n == 0,
           "broadcast with arg0='yes' reaches the matching subscriber only (a=%d b=%d)", ca.n, cb.n);

        r = kdbus_bus_call_method(a, service_unique, OBJ, IFACE, "Emit", &err, NULL, "s", "no");
        kdbus_error_free(&err);
        drain(a);
        drain(b);
        ok(ca.n == 1 && cb.n == 1, "arg0='no' goes the other way (a=%d b=%d)", ca.n, cb.n);

        kdbus_slot_unref(sa);
        r = kdbus_bus_call_method(a, service_unique, OBJ, IFACE, "Emit", &err, NULL, "s", "yes");
        kdbus_error_free(&err);
        drain(a);
        ok(ca.n == 1, "after the slot is released nothing arrives (a=%d)", ca.n);

        r = kdbus_bus_add_match(a, &sn, "type='signal',sender='org.freedesktop.DBus',"
                                "member='NameOwnerChanged'", on_signal, &cn);
        ok(r == 0, "NameOwnerChanged match installs notification entries (r=%d)", r);
        r = kdbus_bus_open(&d, bus_path);
        if (r >= 0)
                snprintf(dname, sizeof(dname), "%s", kdbus_bus_get_unique_name(d));
        drain(a);
        ok(r == 0 && cn.n >= 1 && strcmp(cn.last_arg0, dname) == 0,
           "ID_ADD becomes NameOwnerChanged(%s, \"\", %s) (n=%d last=%s)", dname, dname, cn.n,
           cn.last_arg0);
        cn.n = 0;
        kdbus_bus_unref(d);
        drain(a);
        ok(cn.n >= 1 && strcmp(cn.last_arg0, dname) == 0, "ID_REMOVE becomes NameOwnerChanged (n=%d)",
           cn.n);
        kdbus_slot_unref(sn);
        kdbus_slot_unref(sb);
}

/* ------------------------------------------------------------------ */
/* the remaining driver methods (libkdbus(3)) */

#define ACT_NAME        "org.example.Activatable"

/* a driver call with one string argument (or none when @arg is NULL) */
static int driver(struct kdbus_bus *bus, const char *member, const char *arg,
                  struct kdbus_error *err, struct kdbus_message **reply)
{
        if (arg)
                return kdbus_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                             "org.freedesktop.DBus", member, err, reply, "s", arg);
        return kdbus_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                     "org.freedesktop.DBus", member, err, reply, "");
}

/* an "as" reply joined with commas into @buf; -EBADMSG when the body is not "as" */
static int read_strv(struct kdbus_message *m, char *buf, size_t size)
{
        const char *s;
        size_t len = 0;
        int r;

        buf[0] = 0;
        if (!m || strcmp(kdbus_message_get_signature(m), "as") != 0)
                return -EBADMSG;
        r = kdbus_message_enter_container(m, 'a', "s");
        if (r <= 0)
                return -EBADMSG;
        while ((r = kdbus_message_read_basic(m, 's', &s)) > 0) {
                snprintf(buf + len, size - len, "%s%s", len ? "," : "", s);
                len = strlen(buf);
        }
        kdbus_message_exit_container(m);
        return r;
}

static bool strv_has(const char *joined, const char *name)
{
        size_t n = strlen(name);

        for (const char *p = joined; (p = strstr(p, name)); p += n)
                if ((p == joined || p[-1] == ',') && (p[n] == ',' || p[n] == 0))
                        return true;
        return false;
}

static bool err_is(const struct kdbus_error *err, const char *name)
{
        return err->name && strcmp(err->name, name) == 0;
}

struct creds {
        bool has_uid, has_pid, has_groups, has_label, groups_sorted, label_nul;
        uint32_t uid, pid;
        uint32_t groups[64];
        size_t n_groups;
        int n_entries;
};

/* parse a GetConnectionCredentials a{sv} reply */
static int read_creds(struct kdbus_message *m, struct creds *c)
{
        int r;

        memset(c, 0, sizeof(*c));
        if (!m || strcmp(kdbus_message_get_signature(m), "a{sv}") != 0)
                return -EBADMSG;
        if (kdbus_message_enter_container(m, 'a', "{sv}") <= 0)
                return -EBADMSG;
        while ((r = kdbus_message_enter_container(m, '{', "sv")) > 0) {
                const char *key, *contents = NULL;
                char type;

                if (kdbus_message_read_basic(m, 's', &key) <= 0 ||
                    kdbus_message_peek_type(m, &type, &contents) <= 0 || type != 'v' || !contents ||
                    kdbus_message_enter_container(m, 'v', contents) <= 0)
                        return -EBADMSG;
                c->n_entries++;
                if (strcmp(key, "UnixUserID") == 0 && strcmp(contents, "u") == 0) {
                        c->has_uid = kdbus_message_read_basic(m, 'u', &c->uid) > 0;
                } else if (strcmp(key, "ProcessID") == 0 && strcmp(contents, "u") == 0) {
                        c->has_pid = kdbus_message_read_basic(m, 'u', &c->pid) > 0;
                } else if (strcmp(key, "UnixGroupIDs") == 0 && strcmp(contents, "au") == 0) {
                        const void *p;
                        size_t n;

                        if (kdbus_message_read_array(m, 'u', &p, &n) < 0)
                                return -EBADMSG;
                        c->has_groups = true;
                        c->n_groups = n / 4 < 64 ? n / 4 : 64;
                        memcpy(c->groups, p, c->n_groups * 4);
                        c->groups_sorted = true;
                        for (size_t i = 1; i < c->n_groups; i++)
                                if (c->groups[i - 1] >= c->groups[i])
                                        c->groups_sorted = false;
                } else if (strcmp(key, "LinuxSecurityLabel") == 0 && strcmp(contents, "ay") == 0) {
                        const void *p;
                        size_t n;

                        if (kdbus_message_read_array(m, 'y', &p, &n) < 0)
                                return -EBADMSG;
                        c->has_label = true;
                        c->label_nul = n > 1 && ((const char *)p)[n - 1] == 0 &&
                                       strlen(p) == n - 1;
                } else {
                        kdbus_message_skip(m, NULL);
                }
                if (kdbus_message_exit_container(m) < 0 || kdbus_message_exit_container(m) < 0)
                        return -EBADMSG;
        }
        if (r < 0)
                return r;
        return kdbus_message_exit_container(m);
}

/* an activator connection for @name: owner HELLO with KDBUS_HELLO_ACTIVATOR and a NAME item */
static int activator_open(const char *name)
{
        _Alignas(8) uint8_t buf[sizeof(struct kdbus_cmd_hello) + 16 + 256];
        struct kdbus_cmd_hello *hello = (void *)buf;
        struct kdbus_item *item = hello->items;
        size_t len = strlen(name) + 1;
        int fd;

        fd = open(bus_path, O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        memset(buf, 0, sizeof(buf));
        hello->flags = KDBUS_HELLO_ACTIVATOR | KDBUS_HELLO_ACCEPT_FD;
        hello->attach_flags_send = _KDBUS_ATTACH_ANY;
        hello->pool_size = 1024 * 1024;
        item->size = 16 + len;
        item->type = KDBUS_ITEM_NAME;
        memcpy(item->str, name, len);
        hello->size = sizeof(*hello) + ((item->size + 7) & ~7ULL);
        if (ioctl(fd, KDBUS_CMD_HELLO, hello) < 0) {
                int r = -errno;

                close(fd);
                return r;
        }
        return fd;
}

static bool act_quit;

static int act_method(struct kdbus_bus *bus, struct kdbus_message *m, void *userdata)
{
        (void)userdata;
        if (strcmp(kdbus_message_get_member(m), "Quit") != 0)
                return 0;
        act_quit = true;
        kdbus_bus_reply(bus, m, "");
        return 1;
}

/*
 * The implementer of ACT_NAME: connects a little later than the parent's
 * StartServiceByName, takes the name over from the activator (the queued
 * Peer.Ping moves to it and its library answers) and serves until Quit.
 */
static int run_implementer(void)
{
        struct kdbus_bus *bus = NULL;
        int r;

        usleep(300 * 1000);
        r = kdbus_bus_open(&bus, bus_path);
        if (r < 0)
                return 1;
        kdbus_bus_add_object(bus, NULL, OBJ, act_method, NULL);
        r = kdbus_bus_request_name(bus, ACT_NAME, 0);
        if (r != KDBUS_REQUEST_NAME_PRIMARY_OWNER)
                return 2;
        r = kdbus_bus_run_until(bus, &act_quit, 60ULL * 1000000);
        kdbus_bus_unref(bus);
        return r < 0 ? 3 : 0;
}

static void test_driver_names(struct kdbus_bus *a, struct kdbus_bus *b)
{
        struct kdbus_error err = KDBUS_ERROR_NULL;
        struct kdbus_message *reply = NULL;
        const char *ua = kdbus_bus_get_unique_name(a), *ub = kdbus_bus_get_unique_name(b);
        char list[1024], want[256];
        int r, ra, rb;

        /* ListQueuedOwners: primary first, then the queue by ascending ID */
        ra = kdbus_bus_request_name(a, SERVICE_NAME, 0);
        rb = kdbus_bus_request_name(b, SERVICE_NAME, 0);
        r = driver(a, "ListQueuedOwners", SERVICE_NAME, &err, &reply);
        if (r == 0)
                r = read_strv(reply, list, sizeof(list));
        snprintf(want, sizeof(want), "%s,%s,%s", service_unique,
                 kdbus_bus_get_id(a) < kdbus_bus_get_id(b) ? ua : ub,
                 kdbus_bus_get_id(a) < kdbus_bus_get_id(b) ? ub : ua);
        ok(ra == KDBUS_REQUEST_NAME_IN_QUEUE && rb == KDBUS_REQUEST_NAME_IN_QUEUE && r == 0 &&
           strcmp(list, want) == 0,
           "ListQueuedOwners: owner then both queued connections [%s] (r=%d %s)", list, r,
           err.name ? err.name : "");
        reply = kdbus_message_unref(reply);
        kdbus_error_free(&err);
        kdbus_bus_release_name(b, SERVICE_NAME);
        r = driver(a, "ListQueuedOwners", SERVICE_NAME, &err, &reply);
        if (r == 0)
                r = read_strv(reply, list, sizeof(list));
        snprintf(want, sizeof(want), "%s,%s", service_unique, ua);
        ok(r == 0 && strcmp(list, want) == 0,
           "ListQueuedOwners after a queued connection released: [%s] (r=%d)", list, r);
        reply = kdbus_message_unref(reply);
        kdbus_bus_release_name(a, SERVICE_NAME);

        r = driver(a, "ListQueuedOwners", "org.freedesktop.DBus", &err, &reply);
        if (r == 0)
                r = read_strv(reply, list, sizeof(list));
        ok(r == 0 && strcmp(list, "org.freedesktop.DBus") == 0,
           "ListQueuedOwners(org.freedesktop.DBus) is the driver itself [%s]", list);
        reply = kdbus_message_unref(reply);
        r = driver(a, "ListQueuedOwners", service_unique, &err, &reply);
        if (r == 0)
                r = read_strv(reply, list, sizeof(list));
        ok(r == 0 && strcmp(list, service_unique) == 0,
           "ListQueuedOwners of a unique name is that name [%s]", list);
        reply = kdbus_message_unref(reply);
        r = driver(a, "ListQueuedOwners", "org.example.Nobody", &err, NULL);
        ok(r < 0 && err_is(&err, "org.freedesktop.DBus.Error.NameHasNoOwner"),
           "ListQueuedOwners of an unowned name: NameHasNoOwner (%s)", err.name ? err.name : "-");
        kdbus_error_free(&err);
        r = driver(a, "ListQueuedOwners", "not a name", &err, NULL);
        ok(r < 0 && err_is(&err, "org.freedesktop.DBus.Error.NameHasNoOwner"),
           "ListQueuedOwners of an invalid name: NameHasNoOwner (%s)", err.name ? err.name : "-");
        kdbus_error_free(&err);
        r = kdbus_bus_call_method(a, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                  "org.freedesktop.DBus", "ListQueuedOwners", &err, NULL, "u", 5);
        ok(r < 0 && err_is(&err, "org.freedesktop.DBus.Error.InvalidArgs"),
           "ListQueuedOwners with wrong args: InvalidArgs (%s)", err.name ? err.name : "-");
        kdbus_error_free(&err);
}

static void test_driver_creds(struct kdbus_bus *a, pid_t service_pid)
{
        struct kdbus_error err = KDBUS_ERROR_NULL;
        struct kdbus_message *reply = NULL;
        struct creds c;
        bool has_egid = false;
        uint32_t u = 0;
        int r;

        r = driver(a, "GetConnectionCredentials", kdbus_bus_get_unique_name(a), &err, &reply);
        if (r == 0)
                r = read_creds(reply, &c);
        for (size_t i = 0; r == 0 && i < c.n_groups; i++)
                if (c.groups[i] == (uint32_t)getegid())
                        has_egid = true;
        ok(r == 0 && c.has_uid && c.uid == (uint32_t)geteuid() && c.has_pid &&
           c.pid == (uint32_t)getpid(),
           "GetConnectionCredentials(self): UnixUserID %u, ProcessID %u (r=%d %s)", c.uid, c.pid,
           r, err.name ? err.name : "");
        ok(r == 0 && c.has_groups && has_egid && c.groups_sorted,
           "GetConnectionCredentials: UnixGroupIDs from AUXGROUPS has the egid, ascending, unique "
           "(%zu groups)", c.n_groups);
        if (c.has_label)
                ok(c.label_nul, "GetConnectionCredentials: LinuxSecurityLabel ends in one NUL");
        else
                skip("no security label on this kernel: LinuxSecurityLabel correctly omitted");
        reply = kdbus_message_unref(reply);
        kdbus_error_free(&err);

        r = driver(a, "GetConnectionCredentials", SERVICE_NAME, &err, &reply);
        if (r == 0)
                r = read_creds(reply, &c);
        ok(r == 0 && c.has_pid && c.pid == (uint32_t)service_pid && c.has_uid,
           "GetConnectionCredentials(well-known name) resolves to the service (pid %u, want %d)",
           c.pid, (int)service_pid);
        reply = kdbus_message_unref(reply);
        kdbus_error_free(&err);

        r = driver(a, "GetConnectionCredentials", "org.freedesktop.DBus", &err, &reply);
        if (r == 0)
                r = read_creds(reply, &c);
        ok(r == 0 && c.has_uid && c.uid == (uint32_t)geteuid() && c.has_pid &&
           c.pid == (uint32_t)getpid() && c.n_entries == 2,
           "GetConnectionCredentials(org.freedesktop.DBus): our own uid and pid (r=%d)", r);
        reply = kdbus_message_unref(reply);
        kdbus_error_free(&err);

        r = driver(a, "GetConnectionCredentials", "org.example.Nobody", &err, NULL);
        ok(r < 0 && err_is(&err, "org.freedesktop.DBus.Error.NameHasNoOwner"),
           "GetConnectionCredentials of an unowned name: NameHasNoOwner (%s)",
           err.name ? err.name : "-");
        kdbus_error_free(&err);
        r = driver(a, "GetConnectionCredentials", ":1.999999", &err, NULL);
        ok(r < 0 && err_is(&err, "org.freedesktop.DBus.Error.NameHasNoOwner"),
           "GetConnectionCredentials of a missing unique name: NameHasNoOwner (%s)",
           err.name ? err.name : "-");
        kdbus_error_free(&err);

        r = driver(a, "GetConnectionUnixUser", SERVICE_NAME, &err, &reply);
        if (r == 0 && kdbus_message_read(reply, "u", &u) < 0)
                r = -EBADMSG;
        ok(r == 0 && u == (uint32_t)geteuid(),
           "GetConnectionUnixUser(service) from CREDS: %u (r=%d)", u, r);
        reply = kdbus_message_unref(reply);
        kdbus_error_free(&err);
        u = 0;
        r = driver(a, "GetConnectionUnixProcessID", service_unique, &err, &reply);
        if (r == 0 && kdbus_message_read(reply, "u", &u) < 0)
                r = -EBADMSG;
        ok(r == 0 && u == (uint32_t)service_pid,
           "GetConnectionUnixProcessID(service) from PIDS: %u (r=%d)", u, r);
        reply = kdbus_message_unref(reply);
        kdbus_error_free(&err);
        r = driver(a, "GetConnectionUnixUser", "org.example.Nobody", &err, NULL);
        ok(r < 0 && err_is(&err, "org.freedesktop.DBus.Error.NameHasNoOwner"),
           "GetConnectionUnixUser of an unowned name: NameHasNoOwner (%s)", err.name ? err.name : "-");
        kdbus_error_free(&err);
        r = driver(a, "GetConnectionUnixProcessID", ":1.999999", &err, NULL);
        ok(r < 0 && err_is(&err, "org.freedesktop.DBus.Error.NameHasNoOwner"),
           "GetConnectionUnixProcessID of a missing peer: NameHasNoOwner (%s)",
           err.name ? err.name : "-");
        kdbus_error_free(&err);

        r = driver(a, "GetAdtAuditSessionData", service_unique, &err, NULL);
        ok(r < 0 && err_is(&err, "org.freedesktop.DBus.Error.AdtAuditDataUnknown"),
           "GetAdtAuditSessionData: AdtAuditDataUnknown (%s)", err.name ? err.name : "-");
        kdbus_error_free(&err);
        r = driver(a, "GetConnectionSELinuxSecurityContext", "org.example.Nobody", &err, NULL);
        ok(r < 0 && err_is(&err, "org.freedesktop.DBus.Error.NameHasNoOwner"),
           "GetConnectionSELinuxSecurityContext of an unowned name: NameHasNoOwner (%s)",
           err.name ? err.name : "-");
        kdbus_error_free(&err);
}

static void test_driver_activation(struct kdbus_bus *a)
{
        struct kdbus_error err = KDBUS_ERROR_NULL;
        struct kdbus_message *reply = NULL;
        char list[1024];
        uint32_t u = 0;
        int act, r, status = -1;
        pid_t pid;

        r = driver(a, "ListActivatableNames", NULL, &err, &reply);
        if (r == 0)
                r = read_strv(reply, list, sizeof(list));
        ok(r == 0 && strcmp(list, "org.freedesktop.DBus") == 0,
           "ListActivatableNames without activators: only the driver [%s] (r=%d)", list, r);
        reply = kdbus_message_unref(reply);
        kdbus_error_free(&err);

        act = activator_open(ACT_NAME);
        ok(act >= 0, "activator HELLO for %s (r=%d)", ACT_NAME, act);
        if (act < 0)
                return;
        r = driver(a, "ListActivatableNames", NULL, &err, &reply);
        if (r == 0)
                r = read_strv(reply, list, sizeof(list));
        ok(r == 0 && strv_has(list, "org.freedesktop.DBus") && strv_has(list, ACT_NAME) &&
           !strv_has(list, SERVICE_NAME),
           "ListActivatableNames: LIST with ACTIVATORS shows the activator's name [%s]", list);
        reply = kdbus_message_unref(reply);
        r = driver(a, "ListQueuedOwners", ACT_NAME, &err, NULL);
        ok(r < 0 && err_is(&err, "org.freedesktop.DBus.Error.NameHasNoOwner"),
           "ListQueuedOwners skips the activator: NameHasNoOwner (%s)", err.name ? err.name : "-");
        kdbus_error_free(&err);
        r = driver(a, "GetConnectionUnixUser", ACT_NAME, &err, NULL);
        ok(r < 0 && err_is(&err, "org.freedesktop.DBus.Error.NameHasNoOwner"),
           "credentials of an activator-held name: NameHasNoOwner (%s)", err.name ? err.name : "-");
        kdbus_error_free(&err);
        r = driver(a, "GetConnectionCredentials", ACT_NAME, &err, NULL);
        ok(r < 0 && err_is(&err, "org.freedesktop.DBus.Error.NameHasNoOwner"),
           "GetConnectionCredentials of an activator-held name: NameHasNoOwner (%s)",
           err.name ? err.name : "-");
        kdbus_error_free(&err);

        r = kdbus_bus_call_method(a, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                  "org.freedesktop.DBus", "StartServiceByName", &err, NULL, "su",
                                  SERVICE_NAME, 0);
        ok(r < 0 && err_is(&err, "org.freedesktop.DBus.Error.ServiceUnknown"),
           "StartServiceByName of a running name without activator: ServiceUnknown (%s)",
           err.name ? err.name : "-");
        kdbus_error_free(&err);
        r = kdbus_bus_call_method(a, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                  "org.freedesktop.DBus", "StartServiceByName", &err, NULL, "su",
                                  "org.freedesktop.DBus", 0);
        ok(r < 0 && err_is(&err, "org.freedesktop.DBus.Error.ServiceUnknown"),
           "StartServiceByName(org.freedesktop.DBus): ServiceUnknown (%s)", err.name ? err.name : "-");
        kdbus_error_free(&err);

        pid = fork();
        if (pid == 0) {
                close(act);
                _exit(run_implementer());
        }
        r = kdbus_bus_call_method(a, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                  "org.freedesktop.DBus", "StartServiceByName", &err, &reply, "su",
                                  ACT_NAME, 0);
        if (r == 0 && kdbus_message_read(reply, "u", &u) < 0)
                r = -EBADMSG;
        ok(r == 0 && u == 1,
           "StartServiceByName of an activator-held name: the Ping waits in the activator, moves "
           "to the implementer, 1 SUCCESS (u=%u r=%d %s)", u, r, err.name ? err.name : "");
        reply = kdbus_message_unref(reply);
        kdbus_error_free(&err);
        r = kdbus_bus_call_method(a, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                  "org.freedesktop.DBus", "StartServiceByName", &err, &reply, "su",
                                  ACT_NAME, 0);
        u = 0;
        if (r == 0 && kdbus_message_read(reply, "u", &u) < 0)
                r = -EBADMSG;
        ok(r == 0 && u == 2,
           "StartServiceByName while the implementer runs: 2 ALREADY_RUNNING (u=%u r=%d)", u, r);
        reply = kdbus_message_unref(reply);
        kdbus_error_free(&err);
        r = driver(a, "ListActivatableNames", NULL, &err, &reply);
        if (r == 0)
                r = read_strv(reply, list, sizeof(list));
        ok(r == 0 && strv_has(list, ACT_NAME),
           "ListActivatableNames still lists the running service [%s]", list);
        reply = kdbus_message_unref(reply);
        kdbus_error_free(&err);

        if (pid > 0) {
                r = kdbus_bus_call_method(a, ACT_NAME, OBJ, IFACE, "Quit", &err, NULL, "");
                kdbus_error_free(&err);
                if (r < 0)
                        kill(pid, SIGTERM);
                waitpid(pid, &status, 0);
        }
        ok(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "implementer exited cleanly (status %d)", status);
        close(act);
}

static void test_driver_introspect(struct kdbus_bus *a)
{
        static const char *const methods[] = {
                "Hello", "RequestName", "ReleaseName", "StartServiceByName",
                "UpdateActivationEnvironment", "NameHasOwner", "ListNames",
                "ListActivatableNames", "AddMatch", "RemoveMatch", "GetNameOwner",
                "ListQueuedOwners", "GetConnectionUnixUser", "GetConnectionUnixProcessID",
                "GetAdtAuditSessionData", "GetConnectionSELinuxSecurityContext",
                "GetConnectionCredentials", "ReloadConfig", "GetId", "BecomeMonitor",
        };
        struct kdbus_error err = KDBUS_ERROR_NULL;
        struct kdbus_message *reply = NULL;
        const char *xml = "";
        char needle[128];
        bool all = true;
        int r;

        r = kdbus_bus_call_method(a, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                  "org.freedesktop.DBus.Introspectable", "Introspect", &err, &reply, "");
        if (r == 0)
                r = kdbus_message_read(reply, "s", &xml);
        for (size_t i = 0; r == 0 && i < sizeof(methods) / sizeof(methods[0]); i++) {
                snprintf(needle, sizeof(needle), "<method name=\"%s\">", methods[i]);
                if (!strstr(xml, needle)) {
                        diag("Introspect lacks %s", methods[i]);
                        all = false;
                }
        }
        ok(r == 0 && all && strstr(xml, "<node>") && strstr(xml, "</node>") &&
           strstr(xml, "<interface name=\"org.freedesktop.DBus.Properties\">") &&
           strstr(xml, "<interface name=\"org.freedesktop.DBus.Monitoring\">") &&
           strstr(xml, "<interface name=\"org.freedesktop.DBus.Peer\">") &&
           strstr(xml, "<signal name=\"NameOwnerChanged\">") &&
           strstr(xml, "<property name=\"Features\" type=\"as\" access=\"read\">") &&
           !strstr(xml, "<node name="),
           "Introspect on /org/freedesktop/DBus describes every driver method, the properties, "
           "signals and all five interfaces (r=%d)", r);
        reply = kdbus_message_unref(reply);
        kdbus_error_free(&err);

        r = kdbus_bus_call_method(a, "org.freedesktop.DBus", "/", NULL, "Introspect", &err,
                                  &reply, "");
        if (r == 0)
                r = kdbus_message_read(reply, "s", &xml);
        ok(r == 0 && strstr(xml, "<node name=\"org/freedesktop/DBus\"/>") &&
           strstr(xml, "<interface name=\"org.freedesktop.DBus\">") &&
           !strstr(xml, "org.freedesktop.DBus.Monitoring"),
           "Introspect on / (no interface): child node org/freedesktop/DBus, no Monitoring (r=%d)", r);
        reply = kdbus_message_unref(reply);
        kdbus_error_free(&err);

        r = kdbus_bus_call_method(a, "org.freedesktop.DBus", "/org",
                                  "org.freedesktop.DBus.Introspectable", "Introspect", &err, &reply, "");
        if (r == 0)
                r = kdbus_message_read(reply, "s", &xml);
        ok(r == 0 && strstr(xml, "<node name=\"freedesktop/DBus\"/>"),
           "Introspect on /org: child node freedesktop/DBus (r=%d)", r);
        reply = kdbus_message_unref(reply);
        kdbus_error_free(&err);

        r = kdbus_bus_call_method(a, "org.freedesktop.DBus", "/org/example",
                                  "org.freedesktop.DBus.Introspectable", "Introspect", &err, &reply, "");
        if (r == 0)
                r = kdbus_message_read(reply, "s", &xml);
        ok(r == 0 && !strstr(xml, "<node name=") &&
           strstr(xml, "<interface name=\"org.freedesktop.DBus.Introspectable\">"),
           "Introspect on an unrelated path: no child node (r=%d)", r);
        reply = kdbus_message_unref(reply);
        kdbus_error_free(&err);

        r = kdbus_bus_call_method(a, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                  "org.freedesktop.DBus.Introspectable", "Introspect", &err, NULL,
                                  "s", "x");
        ok(r < 0 && err_is(&err, "org.freedesktop.DBus.Error.InvalidArgs"),
           "Introspect with arguments: InvalidArgs (%s)", err.name ? err.name : "-");
        kdbus_error_free(&err);
}

int main(int argc, char **argv)
{
        struct kdbus_error err = KDBUS_ERROR_NULL;
        struct kdbus_bus *a = NULL, *b = NULL;
        int bus_fd = -1, ready[2], service_names = 0, status, r;
        char line[128];
        ssize_t n;
        pid_t pid;

        if (argc > 1)
                root = argv[1];
        setvbuf(stdout, NULL, _IOLBF, 0);
        printf("TAP version 13\n");

        r = kdbus_bus_make(root, "libtest", true, &bus_fd, &bus_path);
        ok(r == 0, "kdbus_bus_make creates a bus (%s, r=%d)", bus_path ? bus_path : "-", r);
        if (r < 0) {
                printf("1..%d\n", n_test);
                return 1;
        }
        r = kdbus_bus_open(&a, bus_path);
        ok(r == 0 && kdbus_bus_get_unique_name(a) && strncmp(kdbus_bus_get_unique_name(a), ":1.", 3) == 0,
           "HELLO + mmap: unique name %s (r=%d)", a ? kdbus_bus_get_unique_name(a) : "-", r);
        if (r < 0) {
                printf("1..%d\n", n_test);
                return 1;
        }
        {
                uint64_t size, n_hash;

                kdbus_bus_get_bloom(a, &size, &n_hash);
                ok(size == 64 && n_hash == 8, "bloom parameters read from the HELLO slice (%llu/%llu)",
                   (unsigned long long)size, (unsigned long long)n_hash);
        }
        r = kdbus_bus_open(&b, bus_path);
        ok(r == 0, "second connection (r=%d)", r);

        if (pipe(ready) < 0)
                return 1;
        pid = fork();
        if (pid == 0) {
                close(ready[0]);
                kdbus_bus_unref(a);
                kdbus_bus_unref(b);
                _exit(run_service(ready[1]));
        }
        close(ready[1]);
        n = read(ready[0], line, sizeof(line) - 1);
        close(ready[0]);
        if (n <= 0 || sscanf((line[n] = 0, line), "%63s %d", service_unique, &service_names) != 2 ||
            service_unique[0] != ':') {
                ok(false, "service started (%s)", n > 0 ? line : "no answer");
                printf("1..%d\n", n_test);
                return 1;
        }
        diag("service %s, RequestName -> %d", service_unique, service_names);

        test_calls(a);
        test_fds_memfd(a);
        test_driver(a);
        test_pool_discipline();
        test_pool_discipline_receiver(a);
        test_names(a, service_names);
        test_driver_names(a, b);
        test_driver_creds(a, pid);
        test_driver_activation(a);
        test_driver_introspect(a);
        test_signals(a, b);
        test_attach_recv(a, pid);

        r = kdbus_bus_call_method(a, service_unique, OBJ, IFACE, "Quit", &err, NULL, "");
        kdbus_error_free(&err);
        waitpid(pid, &status, 0);
        ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "service exited cleanly (status %d)", status);

        ok(kdbus_bus_get_n_invalid(a) == 0, "no invalid message was received (%llu)",
           (unsigned long long)kdbus_bus_get_n_invalid(a));
        kdbus_bus_unref(a);
        kdbus_bus_unref(b);
        close(bus_fd);
        free(bus_path);
        printf("1..%d\n", n_test);
        return n_fail ? 1 : 0;
}
