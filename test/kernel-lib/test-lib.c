// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-lib: libkdbus against the real module, run in the VM. Prints TAP.
 *
 * One bus is created; a forked service process answers method calls on
 * /org/example/obj (Echo, Fail, Sleep, ReadFd, Sum, Big) and the parent
 * drives the library: sync and async calls, errors, timeouts, fds,
 * memfd payloads, the local driver, pool FREE discipline, names,
 * matches and notifications. Tests that need kernel features which are
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

static void test_pool_discipline(void)
{
        struct kdbus_error err = KDBUS_ERROR_NULL;
        struct kdbus_bus *small = NULL;
        char payload[2048];
        int r = 0, i;

        memset(payload, 'x', sizeof(payload) - 1);
        payload[sizeof(payload) - 1] = 0;
        r = kdbus_bus_new(&small);
        if (r >= 0)
                r = kdbus_bus_set_address(small, bus_path);
        if (r >= 0)
                r = kdbus_bus_set_pool_size(small, 64 * 1024);
        if (r >= 0)
                r = kdbus_bus_start(small);
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
        test_names(a, service_names);
        test_signals(a, b);

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
