// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The proxy's dbus-daemon XML policy (proxy/policy.c, Documentation/policy.md):
 * every rule attribute, the precedence of the blocks, the include
 * machinery and its limits, malformed input, and the decisions
 * dbus-daemon 1.14 makes for Debian's own system.conf. The subtle points
 * (root may not own an arbitrary name, UpdateActivationEnvironment and
 * BecomeMonitor, group order, unknown and "*" users, which rules are
 * refused) were checked against dbus-daemon 1.14.10 when these tests
 * were written.
 *
 * Small configurations are written to a temporary directory; the include
 * tests use the files in test/host/policy/ (POLICY_TEST_DIR).
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "tap.h"

#ifndef POLICY_TEST_DIR
#define POLICY_TEST_DIR "test/host/policy"
#endif

static char tmpdir[] = "/tmp/test-policy.XXXXXX";
static unsigned int n_written;
static char err[1024];

/* warnings of the loader go to stderr: collect them in a file */
static char warn_file[256];
static int saved_stderr = -1;

static void warnings_begin(void)
{
        int fd;

        fflush(stderr);
        snprintf(warn_file, sizeof(warn_file), "%s/warnings", tmpdir);
        fd = open(warn_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
                return;
        saved_stderr = dup(2);
        dup2(fd, 2);
        close(fd);
}

/* the warnings written since warnings_begin(), as a string (static) */
static const char *warnings_end(void)
{
        static char buf[4096];
        ssize_t n = 0;
        int fd;

        fflush(stderr);
        if (saved_stderr >= 0) {
                dup2(saved_stderr, 2);
                close(saved_stderr);
                saved_stderr = -1;
        }
        buf[0] = '\0';
        fd = open(warn_file, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                n = read(fd, buf, sizeof(buf) - 1);
                close(fd);
        }
        buf[n > 0 ? n : 0] = '\0';
        return buf;
}

static char *write_conf(const char *name, const char *xml)
{
        char *path;
        FILE *f;

        if (asprintf(&path, "%s/%s", tmpdir, name) < 0)
                return NULL;
        f = fopen(path, "we");
        if (!f) {
                free(path);
                return NULL;
        }
        fputs(xml, f);
        fclose(f);
        return path;
}

/* loads "<busconfig>BODY</busconfig>"; returns the rc, the policy in *p */
static int load_body(struct proxy_policy **p, const char *body)
{
        char name[64], *xml, *path;
        int r;

        *p = NULL;
        snprintf(name, sizeof(name), "t%u.conf", ++n_written);
        if (asprintf(&xml, "<busconfig>\n%s\n</busconfig>\n", body) < 0)
                return -ENOMEM;
        path = write_conf(name, xml);
        free(xml);
        if (!path)
                return -EIO;
        warnings_begin();
        r = proxy_policy_load(p, path, err, sizeof(err));
        warnings_end();
        free(path);
        return r;
}

static struct proxy_policy *policy(const char *body)
{
        struct proxy_policy *p;

        if (load_body(&p, body) < 0) {
                tap_diag("load: %s", err);
                return NULL;
        }
        return p;
}

static int load_test_file(struct proxy_policy **p, const char *name)
{
        char path[512];

        snprintf(path, sizeof(path), "%s/%s", POLICY_TEST_DIR, name);
        return proxy_policy_load(p, path, err, sizeof(err));
}

#define PEER(u, g) ((struct proxy_policy_peer){ .uid = (u), .gid = (g) })

/* users and groups of every Debian system (base-passwd): daemon, bin; sys, adm */
static const struct proxy_policy_peer userA = { .uid = 1, .gid = 1 };
static const struct proxy_policy_peer userB = { .uid = 2, .gid = 2 };

static struct proxy_policy_message msg(uint8_t type, const char *path, const char *iface, const char *member)
{
        return (struct proxy_policy_message){ .type = type, .path = path, .interface = iface, .member = member };
}

static struct proxy_policy_message call(const char *iface, const char *member)
{
        return msg(1, "/", iface, member);
}

static struct proxy_policy_message reply(uint8_t type, bool requested)
{
        struct proxy_policy_message m = msg(type, NULL, NULL, NULL);

        m.requested_reply = requested;
        if (type == 3)
                m.error_name = "org.example.Error.Failed";
        return m;
}

static struct proxy_policy_message signal_msg(bool broadcast)
{
        struct proxy_policy_message m = msg(4, "/org/example", "org.example.I", "Changed");

        m.broadcast = broadcast;
        return m;
}

#define NAMES(...) ((const char *const[]){ __VA_ARGS__, NULL })

static bool send_ok(const struct proxy_policy *p, const struct proxy_policy_peer *peer,
                    const char *const *names, struct proxy_policy_message m)
{
        return proxy_policy_may_send(p, peer, names, &m);
}

static bool recv_ok(const struct proxy_policy *p, const struct proxy_policy_peer *peer,
                    const char *const *names, struct proxy_policy_message m)
{
        return proxy_policy_may_receive(p, peer, names, &m);
}

static bool own_ok(const struct proxy_policy *p, const struct proxy_policy_peer *peer, const char *name)
{
        return proxy_policy_may_own(p, peer, name);
}

/* ------------------------------------------------------------------ */

static void test_null_policy(void)
{
        struct proxy_policy_message m = call("a.b", "C");
        const char *const *dirs = proxy_policy_servicedirs(NULL);

        tap_ok(proxy_policy_may_connect(NULL, &userA) && own_ok(NULL, &userA, "a.b") &&
               proxy_policy_may_send(NULL, &userA, NULL, &m) &&
               proxy_policy_may_receive(NULL, &userA, NULL, &m) && dirs && !dirs[0],
               "a NULL policy allows everything and has no service directories");
}

static void test_send_attributes(void)
{
        struct proxy_policy *p;
        struct proxy_policy_message m;

        p = policy("<policy context=\"default\">"
                   "<allow send_destination=\"org.example.Dest\"/>"
                   "<allow send_destination=\":1.42\"/>"
                   "<allow send_destination_prefix=\"org.example.Pre\"/>"
                   "</policy>");
        tap_ok(p && send_ok(p, &userA, NAMES(":1.5", "org.example.Dest"), call("a.b", "C")) &&
               !send_ok(p, &userA, NAMES(":1.6", "org.example.Other"), call("a.b", "C")) &&
               !send_ok(p, &userA, NAMES(":1.6"), call("a.b", "C")),
               "send_destination: allows a destination owning the name, nothing else");
        tap_ok(p && send_ok(p, &userA, NAMES(":1.7", "org.example.Other", "org.example.Dest"), call("a.b", "C")),
               "send_destination matches if any of the destination's names matches");
        tap_ok(p && send_ok(p, &userA, NAMES(":1.42"), call("a.b", "C")) &&
               !send_ok(p, &userA, NAMES(":1.420"), call("a.b", "C")),
               "send_destination with a unique name");
        tap_ok(p && send_ok(p, &userA, NAMES(":1.8", "org.example.Pre"), call("a.b", "C")) &&
               send_ok(p, &userA, NAMES(":1.8", "org.example.Pre.Sub.X"), call("a.b", "C")) &&
               !send_ok(p, &userA, NAMES(":1.8", "org.example.Prefix"), call("a.b", "C")) &&
               !send_ok(p, &userA, NAMES(":1.8", "org.example"), call("a.b", "C")),
               "send_destination_prefix: the name and names below it in the . hierarchy");
        tap_ok(p && !send_ok(p, &userA, NULL, signal_msg(true)),
               "a broadcast (no destination names) matches no send_destination rule");
        proxy_policy_free(p);

        p = policy("<policy context=\"default\">"
                   "<allow send_interface=\"org.example.I\"/>"
                   "<allow send_interface=\"org.example.J\" send_member=\"M\"/>"
                   "<allow send_path=\"/org/example/P\"/>"
                   "</policy>");
        tap_ok(p && send_ok(p, &userA, NAMES(":1.1"), call("org.example.I", "Any")) &&
               !send_ok(p, &userA, NAMES(":1.1"), call("org.example.K", "Any")) &&
               !send_ok(p, &userA, NAMES(":1.1"), call(NULL, "Any")),
               "send_interface: an allow rule does not apply to a message without interface");
        tap_ok(p && send_ok(p, &userA, NAMES(":1.1"), call("org.example.J", "M")) &&
               !send_ok(p, &userA, NAMES(":1.1"), call("org.example.J", "N")),
               "send_interface + send_member");
        m = msg(1, "/org/example/P", "x.y", "Z");
        tap_ok(p && send_ok(p, &userA, NAMES(":1.1"), m) &&
               !send_ok(p, &userA, NAMES(":1.1"), msg(1, "/org/example/P/sub", "x.y", "Z")),
               "send_path matches the exact path only");
        proxy_policy_free(p);

        p = policy("<policy context=\"default\">"
                   "<allow send_type=\"*\"/>"
                   "<deny send_interface=\"org.example.I\"/>"
                   "<deny send_member=\"Forbidden\" send_path=\"*\"/>"
                   "</policy>");
        tap_ok(p && !send_ok(p, &userA, NAMES(":1.1"), call("org.example.I", "X")) &&
               !send_ok(p, &userA, NAMES(":1.1"), call(NULL, "X")) &&
               send_ok(p, &userA, NAMES(":1.1"), call("org.example.J", "X")),
               "a deny rule with send_interface applies to a message without interface");
        tap_ok(p && !send_ok(p, &userA, NAMES(":1.1"), call("a.b", "Forbidden")) &&
               send_ok(p, &userA, NAMES(":1.1"), call("a.b", "Allowed")),
               "send_member on a deny rule");
        proxy_policy_free(p);

        p = policy("<policy context=\"default\">"
                   "<allow send_type=\"signal\"/>"
                   "<allow send_type=\"error\" send_error=\"org.example.Error.Failed\"/>"
                   "</policy>");
        m = reply(3, true);
        tap_ok(p && send_ok(p, &userA, NAMES(":1.1"), signal_msg(false)) &&
               !send_ok(p, &userA, NAMES(":1.1"), call("a.b", "C")) &&
               !send_ok(p, &userA, NAMES(":1.1"), reply(2, true)),
               "send_type selects the message type");
        tap_ok(p && send_ok(p, &userA, NAMES(":1.1"), m) &&
               (m.error_name = "org.example.Error.Other", !send_ok(p, &userA, NAMES(":1.1"), m)),
               "send_error selects the error name");
        proxy_policy_free(p);

        p = policy("<policy context=\"default\">"
                   "<allow send_type=\"method_return\"/>"
                   "<allow send_type=\"error\" send_requested_reply=\"false\"/>"
                   "</policy>");
        tap_ok(p && send_ok(p, &userA, NAMES(":1.1"), reply(2, true)) &&
               !send_ok(p, &userA, NAMES(":1.1"), reply(2, false)),
               "an allow rule applies to requested replies only by default");
        tap_ok(p && send_ok(p, &userA, NAMES(":1.1"), reply(3, false)) &&
               send_ok(p, &userA, NAMES(":1.1"), reply(3, true)),
               "send_requested_reply=\"false\" on allow: unrequested replies too");
        proxy_policy_free(p);

        p = policy("<policy context=\"default\">"
                   "<allow send_type=\"*\" send_requested_reply=\"false\"/>"
                   "<deny send_type=\"method_return\"/>"
                   "<deny send_type=\"error\" send_requested_reply=\"true\"/>"
                   "</policy>");
        tap_ok(p && send_ok(p, &userA, NAMES(":1.1"), reply(2, true)) &&
               !send_ok(p, &userA, NAMES(":1.1"), reply(2, false)),
               "a deny rule applies to unrequested replies only by default");
        tap_ok(p && !send_ok(p, &userA, NAMES(":1.1"), reply(3, true)) &&
               !send_ok(p, &userA, NAMES(":1.1"), reply(3, false)),
               "send_requested_reply=\"true\" on deny: requested replies too");
        proxy_policy_free(p);

        p = policy("<policy context=\"default\">"
                   "<allow send_type=\"method_return\" eavesdrop=\"true\"/>"
                   "</policy>");
        tap_ok(p && send_ok(p, &userA, NAMES(":1.1"), reply(2, false)),
               "eavesdrop=\"true\" on an allow send rule lifts the requested-reply restriction");
        proxy_policy_free(p);

        p = policy("<policy context=\"default\">"
                   "<allow send_type=\"signal\" send_broadcast=\"true\"/>"
                   "</policy>");
        tap_ok(p && send_ok(p, &userA, NULL, signal_msg(true)) &&
               !send_ok(p, &userA, NAMES(":1.1"), signal_msg(false)),
               "send_broadcast=\"true\" applies to broadcasts only");
        proxy_policy_free(p);
        p = policy("<policy context=\"default\">"
                   "<allow send_type=\"*\" send_broadcast=\"false\"/>"
                   "</policy>");
        tap_ok(p && send_ok(p, &userA, NAMES(":1.1"), signal_msg(false)) &&
               send_ok(p, &userA, NAMES(":1.1"), call("a.b", "C")) &&
               !send_ok(p, &userA, NULL, signal_msg(true)),
               "send_broadcast=\"false\" applies to unicast messages only");
        proxy_policy_free(p);

        p = policy("<policy context=\"default\">"
                   "<allow send_destination=\"*\" send_interface=\"*\" send_member=\"*\" send_path=\"*\" send_type=\"*\"/>"
                   "</policy>");
        tap_ok(p && send_ok(p, &userA, NULL, signal_msg(true)) &&
               send_ok(p, &userA, NAMES(":1.1"), call(NULL, NULL)),
               "\"*\" values match anything, a broadcast included");
        proxy_policy_free(p);

        p = policy("<policy context=\"default\">"
                   "<allow send_type=\"*\"/>"
                   "<deny send_destination=\"org.example.S\" send_broadcast=\"true\"/>"
                   "</policy>");
        tap_ok(p && send_ok(p, &userA, NAMES(":1.3"), signal_msg(true)) &&
               !send_ok(p, &userA, NAMES(":1.3", "org.example.S"), signal_msg(true)),
               "a broadcast checked per receiver (names given) meets send_destination rules");
        proxy_policy_free(p);
}

static void test_receive_attributes(void)
{
        struct proxy_policy *p;
        struct proxy_policy_message m;

        p = policy("<policy context=\"default\">"
                   "<allow receive_sender=\"org.example.Src\"/>"
                   "<allow receive_interface=\"org.example.I\" receive_member=\"M\"/>"
                   "<allow receive_type=\"signal\"/>"
                   "</policy>");
        tap_ok(p && recv_ok(p, &userA, NAMES(":1.9", "org.example.Other", "org.example.Src"), call("x.y", "Z")) &&
               !recv_ok(p, &userA, NAMES(":1.9", "org.example.Other"), call("x.y", "Z")) &&
               !recv_ok(p, &userA, NULL, call("x.y", "Z")),
               "receive_sender matches any of the sender's names");
        tap_ok(p && recv_ok(p, &userA, NAMES(":1.9"), call("org.example.I", "M")) &&
               !recv_ok(p, &userA, NAMES(":1.9"), call("org.example.I", "N")) &&
               !recv_ok(p, &userA, NAMES(":1.9"), call(NULL, "M")),
               "receive_interface + receive_member");
        tap_ok(p && recv_ok(p, &userA, NAMES(":1.9"), signal_msg(true)) &&
               !recv_ok(p, &userA, NAMES(":1.9"), reply(2, true)),
               "receive_type");
        proxy_policy_free(p);

        p = policy("<policy context=\"default\">"
                   "<allow receive_path=\"/p\"/>"
                   "<allow receive_type=\"error\" receive_error=\"org.example.E\" receive_requested_reply=\"false\"/>"
                   "</policy>");
        tap_ok(p && recv_ok(p, &userA, NAMES(":1.9"), msg(1, "/p", "x.y", "Z")) &&
               !recv_ok(p, &userA, NAMES(":1.9"), msg(1, "/q", "x.y", "Z")),
               "receive_path");
        tap_ok(p && recv_ok(p, &userA, NAMES(":1.9"), reply(2, true)),
               "a path (member, error) rule also matches a message that has no such field, as in dbus-daemon");
        m = reply(3, false);
        m.error_name = "org.example.E";
        tap_ok(p && recv_ok(p, &userA, NAMES(":1.9"), m) &&
               (m.error_name = "org.example.F", !recv_ok(p, &userA, NAMES(":1.9"), m)),
               "receive_error");
        proxy_policy_free(p);

        p = policy("<policy context=\"default\">"
                   "<allow receive_type=\"method_return\"/>"
                   "<allow receive_type=\"error\" receive_requested_reply=\"false\"/>"
                   "</policy>");
        tap_ok(p && recv_ok(p, &userA, NAMES(":1.9"), reply(2, true)) &&
               !recv_ok(p, &userA, NAMES(":1.9"), reply(2, false)) &&
               recv_ok(p, &userA, NAMES(":1.9"), reply(3, false)),
               "receive_requested_reply, default and \"false\"");
        proxy_policy_free(p);

        p = policy("<policy context=\"default\">"
                   "<allow eavesdrop=\"true\"/>"
                   "<deny receive_interface=\"org.example.Spy\" eavesdrop=\"true\"/>"
                   "<deny receive_interface=\"org.example.No\"/>"
                   "</policy>");
        tap_ok(p && recv_ok(p, &userA, NAMES(":1.9"), call("org.example.Spy", "X")) &&
               !recv_ok(p, &userA, NAMES(":1.9"), call("org.example.No", "X")) &&
               recv_ok(p, &userA, NAMES(":1.9"), call("org.example.Ok", "X")),
               "<allow eavesdrop> is a receive rule; a deny with eavesdrop=\"true\" only applies to eavesdropping");
        proxy_policy_free(p);

        p = policy("<policy context=\"default\">"
                   "<allow receive_type=\"*\" min_fds=\"1\"/>"
                   "<allow receive_interface=\"org.example.F\" max_fds=\"4\"/>"
                   "</policy>");
        tap_ok(p && !recv_ok(p, &userA, NAMES(":1.9"), call("a.b", "C")) &&
               recv_ok(p, &userA, NAMES(":1.9"), call("org.example.F", "C")),
               "min_fds/max_fds accepted; messages count as carrying no fds");
        proxy_policy_free(p);
}

static void test_own(void)
{
        struct proxy_policy *p;

        p = policy("<policy context=\"default\">"
                   "<allow own=\"org.example.A\"/>"
                   "<allow own_prefix=\"org.example.P\"/>"
                   "</policy>");
        tap_ok(p && own_ok(p, &userA, "org.example.A") && !own_ok(p, &userA, "org.example.B") &&
               !own_ok(p, &userA, "org.example.A.Sub"),
               "own: exactly the name");
        tap_ok(p && own_ok(p, &userA, "org.example.P") && own_ok(p, &userA, "org.example.P.Q.R") &&
               !own_ok(p, &userA, "org.example.PQ") && !own_ok(p, &userA, "org.example"),
               "own_prefix: the name and the names below it");
        proxy_policy_free(p);

        p = policy("<policy context=\"default\"><allow own=\"*\"/><deny own=\"org.example.No\"/></policy>");
        tap_ok(p && own_ok(p, &userA, "com.anything") && !own_ok(p, &userA, "org.example.No"),
               "own=\"*\" matches every name, a later deny wins");
        proxy_policy_free(p);

        p = policy("<policy context=\"default\"><allow send_destination=\"*\"/></policy>");
        tap_ok(p && !own_ok(p, &userA, "org.example.A"), "own defaults to deny");
        proxy_policy_free(p);
}

static void test_connect(void)
{
        gid_t groups[] = { 50, 3 };
        struct proxy_policy_peer in100 = { .uid = 1002, .gid = 1002, .groups = groups, .n_groups = 2 };
        struct proxy_policy *p;

        p = policy("<policy context=\"default\"><allow own=\"*\"/></policy>");
        tap_ok(p && proxy_policy_may_connect(p, &userA), "no user/group rules: everybody may connect");
        proxy_policy_free(p);

        p = policy("<policy context=\"default\"><allow user=\"1\"/><allow group=\"3\"/></policy>"
                   "<policy user=\"2\"><allow user=\"2\"/></policy>");
        tap_ok(p && proxy_policy_may_connect(p, &userA) && !proxy_policy_may_connect(p, &userB),
               "allow user=: that user only (user=/group= rules in a user block do not count)");
        tap_ok(p && proxy_policy_may_connect(p, &in100) && !proxy_policy_may_connect(p, &PEER(1003, 5)),
               "allow group=: a supplementary group counts");
        tap_ok(p && proxy_policy_may_connect(p, &PEER(1004, 3)), "allow group=: the primary group counts");
        tap_ok(p && proxy_policy_may_connect(p, &PEER(0, 0)) &&
               proxy_policy_may_connect(p, &PEER(getuid(), getgid())),
               "root and the proxy's own uid may always connect");
        proxy_policy_free(p);

        p = policy("<policy user=\"2\"><deny user=\"1\"/><deny user=\"2\"/></policy>"
                   "<policy context=\"default\"><allow own=\"*\"/></policy>");
        tap_ok(p && proxy_policy_may_connect(p, &userA) && proxy_policy_may_connect(p, &userB),
               "user=/group= rules outside the default and mandatory blocks have no effect");
        proxy_policy_free(p);

        p = policy("<policy context=\"default\"><allow user=\"*\"/><deny user=\"1\"/></policy>"
                   "<policy context=\"mandatory\"><deny group=\"3\"/></policy>");
        tap_ok(p && !proxy_policy_may_connect(p, &userA) && proxy_policy_may_connect(p, &userB),
               "user=\"*\" then a later deny user=");
        tap_ok(p && !proxy_policy_may_connect(p, &in100), "a mandatory deny group= overrides the default allow");
        proxy_policy_free(p);

        p = policy("<policy context=\"default\"><allow user=\"root\"/><allow group=\"root\"/></policy>");
        tap_ok(p && !proxy_policy_may_connect(p, &userA) && proxy_policy_may_connect(p, &PEER(1005, 0)),
               "user and group names resolved (root)");
        proxy_policy_free(p);
}

static void test_precedence(void)
{
        gid_t groups[] = { 3, 4 }, groups_rev[] = { 4, 3 };
        struct proxy_policy_peer u1000g = { .uid = 1, .gid = 1, .groups = groups, .n_groups = 2 };
        struct proxy_policy_peer u1001g = { .uid = 2, .gid = 2, .groups = groups, .n_groups = 1 };
        struct proxy_policy_peer u1002g = { .uid = 1002, .gid = 1002, .groups = groups, .n_groups = 2 };
        struct proxy_policy_peer u1002r = { .uid = 1002, .gid = 1002, .groups = groups_rev, .n_groups = 2 };
        struct proxy_policy_peer u1003p = { .uid = 1003, .gid = 4, .groups = groups, .n_groups = 1 };
        struct proxy_policy *p;
        const char *w;

        p = policy("<policy context=\"mandatory\"><deny own=\"org.example.M\"/></policy>"
                   "<policy user=\"1\">"
                   "  <allow own=\"org.example.G\"/><allow own=\"org.example.M\"/><allow own=\"org.example.C\"/>"
                   "</policy>"
                   "<policy at_console=\"false\"><deny own=\"org.example.C\"/></policy>"
                   "<policy at_console=\"true\"><allow own=\"org.example.T\"/></policy>"
                   "<policy group=\"3\"><deny own=\"org.example.G\"/><allow own=\"org.example.H\"/></policy>"
                   "<policy group=\"4\"><deny own=\"org.example.H\"/></policy>"
                   "<policy context=\"default\">"
                   "  <allow own=\"org.example.D\"/><allow own=\"org.example.G\"/><allow own=\"org.example.M\"/>"
                   "  <allow own=\"org.example.C\"/><allow own=\"org.example.H\"/>"
                   "</policy>");
        tap_ok(p && own_ok(p, &userB, "org.example.D") && own_ok(p, &userB, "org.example.G") &&
               !own_ok(p, &u1001g, "org.example.G"),
               "a group block overrides the default block, whatever the order in the file");
        tap_ok(p && own_ok(p, &u1000g, "org.example.G"), "a user block overrides a group block");
        tap_ok(p && own_ok(p, &u1001g, "org.example.H") && !own_ok(p, &u1002g, "org.example.H") &&
               !own_ok(p, &u1002r, "org.example.H") && !own_ok(p, &u1003p, "org.example.H"),
               "group blocks in ascending gid order, primary gid included (as dbus-daemon 1.14)");
        tap_ok(p && !own_ok(p, &userA, "org.example.C") && !own_ok(p, &PEER(4242, 4242), "org.example.T"),
               "at_console=\"false\" blocks apply after the user block (no seat), at_console=\"true\" do not");
        tap_ok(p && !own_ok(p, &userA, "org.example.M") && !own_ok(p, &userB, "org.example.M"),
               "the mandatory block overrides everything");
        proxy_policy_free(p);

        p = policy("<policy context=\"default\"><allow own=\"org.example.A\"/><deny own=\"org.example.A\"/>"
                   "<deny own=\"org.example.B\"/><allow own=\"org.example.B\"/></policy>"
                   "<policy context=\"default\"><deny own=\"org.example.B\"/></policy>");
        tap_ok(p && !own_ok(p, &userA, "org.example.A"), "within a block the later rule wins (deny)");
        p = (proxy_policy_free(p), policy("<policy context=\"default\"><deny own=\"org.example.A\"/>"
                                          "<allow own=\"org.example.A\"/></policy>"));
        tap_ok(p && own_ok(p, &userA, "org.example.A"), "within a block the later rule wins (allow)");
        proxy_policy_free(p);
        p = policy("<policy context=\"default\"><allow own=\"org.example.B\"/></policy>"
                   "<policy context=\"default\"><deny own=\"org.example.B\"/></policy>");
        tap_ok(p && !own_ok(p, &userA, "org.example.B"), "a later block of the same kind wins");
        proxy_policy_free(p);

        p = NULL;
        {
                char *path = write_conf("unknown-user.conf",
                                        "<busconfig>"
                                        "<policy context=\"default\"><allow own=\"*\"/></policy>"
                                        "<policy user=\"no-such-user-xyz\"><deny own=\"org.example.U\"/></policy>"
                                        "<policy user=\"*\"><deny own=\"org.example.Star\"/></policy>"
                                        "<policy user=\"4242424\"><deny own=\"org.example.Num\"/></policy>"
                                        "<policy group=\"4242424\"><deny own=\"org.example.Num\"/></policy>"
                                        "<policy group=\"*\"><deny own=\"org.example.Star\"/></policy>"
                                        "<policy context=\"default\"><deny user=\"no-such-user-xyz\"/></policy>"
                                        "</busconfig>");
                warnings_begin();
                if (path && proxy_policy_load(&p, path, err, sizeof(err)) < 0)
                        tap_diag("load: %s", err);
                w = warnings_end();
                free(path);
        }
        tap_ok(p && own_ok(p, &userA, "org.example.U") && own_ok(p, &userA, "org.example.Star") &&
               own_ok(p, &PEER(4242424, 4242424), "org.example.Num") &&
               proxy_policy_may_connect(p, &userA),
               "unknown users and groups (names or numbers) and policy user=\"*\"/group=\"*\": ignored (as dbus-daemon)");
        tap_ok(strstr(w, "no-such-user-xyz") && strstr(w, "\"*\"") && strstr(w, "unknown-user.conf:1: warning"),
               "... with a warning giving file:line");
        proxy_policy_free(p);

        p = policy("<policy user=\"root\"><allow own=\"org.example.R\"/></policy>"
                   "<policy group=\"0\"><allow own=\"org.example.G0\"/></policy>");
        tap_ok(p && own_ok(p, &PEER(0, 0), "org.example.R") && !own_ok(p, &userA, "org.example.R") &&
               own_ok(p, &PEER(7, 0), "org.example.G0") && !own_ok(p, &PEER(7, 7), "org.example.G0"),
               "policy user= by name, group= by number");
        proxy_policy_free(p);
}

static int expect_error(const char *what, const char *body, int want, const char *needle)
{
        struct proxy_policy *p;
        int r;

        r = load_body(&p, body);
        proxy_policy_free(p);
        return tap_ok(r == want && !p && (!needle || strstr(err, needle)),
                      "rejected: %s (%d: %s)", what, r, err);
}

static void test_rejected(void)
{
        expect_error("unknown element in <busconfig>", "<frobnicate/>", -EINVAL, ":2: element <frobnicate>");
        expect_error("unknown element in <policy>",
                     "<policy context=\"default\"><permit own=\"a.b\"/></policy>", -EINVAL, "<permit>");
        expect_error("unknown attribute",
                     "<policy context=\"default\"><allow send_frob=\"x\"/></policy>", -EINVAL, "send_frob");
        expect_error("send and receive attributes mixed",
                     "<policy context=\"default\"><allow send_interface=\"a.b\" receive_sender=\"c.d\"/></policy>",
                     -EINVAL, "combination");
        expect_error("send_interface with send_error",
                     "<policy context=\"default\"><allow send_interface=\"a.b\" send_error=\"c.d\"/></policy>",
                     -EINVAL, "combination");
        expect_error("send_member without send_interface or send_path",
                     "<policy context=\"default\"><deny send_destination=\"a.b\" send_member=\"M\"/></policy>",
                     -EINVAL, "member");
        expect_error("receive_member without receive_interface or receive_path",
                     "<policy context=\"default\"><allow receive_member=\"*\"/></policy>", -EINVAL, "member");
        expect_error("<check> (dbus-daemon 1.14 has none)",
                     "<policy context=\"default\"><check send_type=\"signal\" privilege=\"p\"/></policy>",
                     -EINVAL, "<check>");
        expect_error("own with user",
                     "<policy context=\"default\"><allow own=\"a.b\" user=\"root\"/></policy>", -EINVAL, "combination");
        expect_error("bad send_type",
                     "<policy context=\"default\"><allow send_type=\"method\"/></policy>", -EINVAL, "method");
        expect_error("bad boolean",
                     "<policy context=\"default\"><allow send_type=\"signal\" send_broadcast=\"yes\"/></policy>",
                     -EINVAL, "send_broadcast");
        expect_error("rule without attributes", "<policy context=\"default\"><allow/></policy>", -EINVAL, NULL);
        expect_error("policy with two selectors", "<policy context=\"default\" user=\"root\"></policy>",
                     -EINVAL, "exactly one");
        expect_error("bad context", "<policy context=\"sometimes\"></policy>", -EINVAL, "sometimes");
        expect_error("text inside <policy>", "<policy context=\"default\">text</policy>", -EINVAL, "text");
        expect_error("element inside <allow>",
                     "<policy context=\"default\"><allow own=\"a.b\"><deny own=\"c\"/></allow></policy>",
                     -EINVAL, NULL);
        expect_error("malformed XML", "<policy context=\"default\"><allow own=\"a.b\"></policy>", -EINVAL,
                     ".conf:2: mismatched tag");
        expect_error("missing include", "<include>/nonexistent/dir/x.conf</include>", -ENOENT,
                     "/nonexistent/dir/x.conf");
        expect_error("empty include", "<include>  </include>", -EINVAL, "<include>");
        expect_error("unknown attribute on <include>", "<include ignore=\"yes\">x.conf</include>", -EINVAL, "ignore");
        expect_error("ignore_missing neither yes nor no", "<include ignore_missing=\"true\">x.conf</include>",
                     -EINVAL, "ignore_missing");
}

static void test_files(void)
{
        struct proxy_policy *p = NULL;
        const char *const *dirs;
        const char *w;
        char *path;
        int r;

        r = load_test_file(&p, "malformed.conf");
        tap_ok(r == -EINVAL && !p && strstr(err, "policy/malformed.conf:5:"),
               "malformed XML: an error with file:line (%s)", err);
        r = load_test_file(&p, "include-malformed.conf");
        tap_ok(r == -EINVAL && !p && strstr(err, "malformed.conf:5:"),
               "malformed included file: the error names the included file (%s)", err);
        r = load_test_file(&p, "loop-a.conf");
        tap_ok(r == -ELOOP && !p && strstr(err, "circular"), "an include loop fails (%s)", err);
        r = load_test_file(&p, "self.conf");
        tap_ok(r == -ELOOP && !p, "a file including itself fails, ignore_missing or not (%s)", err);
        r = load_test_file(&p, "missing.conf");
        tap_ok(r == -ENOENT && !p && strstr(err, "does-not-exist.conf"), "a missing include fails (%s)", err);
        r = load_test_file(&p, "entities.conf");
        tap_ok(r == -EINVAL && !p, "entity declarations are refused (%s)", err);
        r = proxy_policy_load(&p, "/nonexistent/bus.conf", err, sizeof(err));
        tap_ok(r == -ENOENT && !p && strstr(err, "/nonexistent/bus.conf"), "a missing file fails (%s)", err);
        tap_ok(proxy_policy_load(&p, POLICY_TEST_DIR "/malformed.conf", NULL, 0) == -EINVAL && !p &&
               proxy_policy_load(&p, POLICY_TEST_DIR "/loop-a.conf", err, 1) == -ELOOP && !p && !err[0],
               "no or a tiny error buffer is fine");
        r = proxy_policy_load(&p, POLICY_TEST_DIR, err, sizeof(err));
        tap_ok(r < 0 && !p, "a directory is not a configuration file (%s)", err);

        warnings_begin();
        r = load_test_file(&p, "include-main.conf");
        w = warnings_end();
        tap_ok(r == 0 && p, "include-main.conf loads: ignored elements, include, ignore_missing, includedir (%s)",
               r ? err : "ok");
        tap_ok(p && own_ok(p, &userA, "org.example.Main") && own_ok(p, &userA, "org.example.Sub") &&
               own_ok(p, &userA, "org.example.A") && !own_ok(p, &userA, "org.example.Other"),
               "rules of the file, its <include> and its <includedir> apply");
        tap_ok(p && !own_ok(p, &userA, "org.example.Order"),
               "includedir files are read in name order (20-b.conf after 10-a.conf)");
        tap_ok(p && !own_ok(p, &userA, "org.example.Last"),
               "included rules sit where the include is: a later rule of the including file wins");
        tap_ok(p && !own_ok(p, &userA, "org.example.Bad") && !own_ok(p, &userA, "org.example.Disabled") &&
               strstr(w, "15-bad.conf:"),
               "a broken includedir file is skipped as a whole with a warning; only *.conf files are read");
        dirs = proxy_policy_servicedirs(p);
        tap_ok(p && dirs[0] && strcmp(dirs[0], POLICY_TEST_DIR "/services") == 0 &&
               dirs[1] && strcmp(dirs[1], "/abs/services") == 0 &&
               dirs[2] && strcmp(dirs[2], "/usr/local/share/dbus-1/system-services") == 0 &&
               dirs[3] && strcmp(dirs[3], "/usr/share/dbus-1/system-services") == 0 &&
               dirs[4] && strcmp(dirs[4], "/lib/dbus-1/system-services") == 0 && !dirs[5],
               "servicedirs: relative to the file, deduplicated, then the standard system ones");
        proxy_policy_free(p);
        p = NULL;

        /* after a skipped includedir file, a later error is still reported as itself */
        path = NULL;
        if (asprintf(&path, "<includedir>%s/inc.d</includedir><include>missing-after.conf</include>",
                     POLICY_TEST_DIR) >= 0) {
                r = load_body(&p, path);
                tap_ok(r == -ENOENT && !p && strstr(err, "missing-after.conf") && !strstr(err, "15-bad"),
                       "an error after a skipped includedir file is reported (%s)", err);
        }
        free(path);

        /* a chain of includes deeper than the limit */
        for (int i = 0; i < 40; ++i) {
                char name[32], xml[128];

                snprintf(name, sizeof(name), "chain%d.conf", i);
                snprintf(xml, sizeof(xml), "<busconfig><include>chain%d.conf</include></busconfig>", i + 1);
                free(write_conf(name, i == 39 ? "<busconfig/>" : xml));
        }
        path = NULL;
        if (asprintf(&path, "%s/chain30.conf", tmpdir) >= 0) {
                r = proxy_policy_load(&p, path, err, sizeof(err));
                tap_ok(r == 0 && p, "a chain of 10 includes loads (%s)", r ? err : "ok");
                proxy_policy_free(p);
                p = NULL;
        }
        free(path);
        if (asprintf(&path, "%s/chain0.conf", tmpdir) >= 0) {
                r = proxy_policy_load(&p, path, err, sizeof(err));
                tap_ok(r == -ELOOP && !p && strstr(err, "nested"), "a chain of 40 includes hits the depth limit (%s)",
                       err);
        }
        free(path);

        /* a file over the size limit */
        path = NULL;
        if (asprintf(&path, "%s/big.conf", tmpdir) >= 0) {
                FILE *f = fopen(path, "we");

                if (f) {
                        fputs("<busconfig>", f);
                        for (int i = 0; i < 100000; ++i)
                                fputs("<!-- padding padding -->", f);
                        fputs("</busconfig>", f);
                        fclose(f);
                }
                r = proxy_policy_load(&p, path, err, sizeof(err));
                tap_ok(r == -EFBIG && !p, "a file over 1 MiB is refused (%s)", err);
        }
        free(path);
}

/* every truncation and many single-byte corruptions of a full configuration */
static void test_corruptions(void)
{
        static const char base[] =
                "<?xml version=\"1.0\"?>\n"
                "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
                " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
                "<busconfig>\n"
                "  <type>system</type><fork/><limit name=\"max_message_size\">1000</limit>\n"
                "  <servicedir>svc</servicedir><standard_session_servicedirs/>\n"
                "  <include ignore_missing=\"yes\">nothing.conf</include>\n"
                "  <policy context=\"default\">\n"
                "    <allow user=\"*\"/><deny own=\"*\"/><allow own_prefix=\"a.b\"/>\n"
                "    <deny send_type=\"method_call\" send_requested_reply=\"true\"/>\n"
                "    <allow send_destination=\"a.b\" send_interface=\"a.b.I\" send_member=\"M\" send_path=\"/p\"/>\n"
                "    <allow send_type=\"signal\" send_broadcast=\"true\" eavesdrop=\"false\"/>\n"
                "    <allow receive_sender=\"a.b\" receive_type=\"error\" receive_error=\"a.b.E\"/>\n"
                "  </policy>\n"
                "  <policy user=\"root\"><allow own=\"*\"/></policy>\n"
                "  <policy group=\"0\"><allow send_destination_prefix=\"a\"/></policy>\n"
                "  <policy at_console=\"true\"><allow receive_interface=\"x.y\" receive_member=\"Z\"/></policy>\n"
                "  <policy context=\"mandatory\"><deny receive_path=\"/secret\" receive_requested_reply=\"false\"/></policy>\n"
                "</busconfig>\n";
        static const char bytes[] = { '<', '"', '&', '\0', (char)0xff };
        size_t len = strlen(base), loads = 0, ok = 0, no_message = 0;
        char buf[sizeof(base)], *path;
        struct proxy_policy *p;
        FILE *f;

        if (asprintf(&path, "%s/corrupt.conf", tmpdir) < 0) {
                tap_ok(false, "corruptions: out of memory");
                return;
        }
        warnings_begin();
        for (size_t i = 0; i <= len; ++i) {
                for (size_t b = 0; b <= sizeof(bytes); ++b) {
                        size_t n = len;

                        memcpy(buf, base, len);
                        if (b == sizeof(bytes))
                                n = i;                  /* truncation */
                        else if (i < len)
                                buf[i] = bytes[b];
                        else
                                continue;
                        f = fopen(path, "we");
                        if (!f)
                                continue;
                        fwrite(buf, 1, n, f);
                        fclose(f);
                        ++loads;
                        if (proxy_policy_load(&p, path, err, sizeof(err)) == 0) {
                                ++ok;
                                proxy_policy_free(p);
                        } else if (!err[0] || p) {
                                ++no_message;
                        }
                }
        }
        warnings_end();
        free(path);
        tap_ok(loads > 3000 && ok > 0 && ok < loads && no_message == 0,
               "%zu truncated or corrupted configurations: no crash, %zu load, every failure has a message",
               loads, ok);
}

static bool user_exists(const char *name, uid_t *uid)
{
        struct passwd *pw = getpwnam(name);

        if (pw && uid)
                *uid = pw->pw_uid;
        return pw != NULL;
}

/*
 * Debian's system.conf with the system.d directories of this machine,
 * the decisions dbus-daemon makes for it (the own, driver and monitoring
 * ones were checked against dbus-daemon 1.14.10 running this
 * configuration).
 */
static void test_debian_system(void)
{
        const char *conf = "/usr/share/dbus-1/system.conf";
        const struct proxy_policy_peer root = { .uid = 0, .gid = 0 };
        const struct proxy_policy_peer nobody = { .uid = 65534, .gid = 65534 };
        const char *const *dirs;
        struct proxy_policy *p = NULL;
        bool has_hostname, has_login1;
        uid_t polkitd;
        int r;
        const unsigned int n = 14;

        if (access(conf, R_OK) < 0) {
                for (unsigned int i = 0; i < n; ++i)
                        tap_ok(true, "# SKIP %s absent (apt-get install dbus-daemon)", conf);
                return;
        }
        has_hostname = access("/usr/share/dbus-1/system.d/org.freedesktop.hostname1.conf", R_OK) == 0;
        has_login1 = access("/usr/share/dbus-1/system.d/org.freedesktop.login1.conf", R_OK) == 0;

        warnings_begin();
        r = proxy_policy_load(&p, conf, err, sizeof(err));
        warnings_end();
        tap_ok(r == 0 && p, "Debian's %s loads with its system.d directories (%s)", conf, r ? err : "ok");
        if (!p) {
                for (unsigned int i = 1; i < n; ++i)
                        tap_ok(false, "system.conf not loaded");
                return;
        }
        tap_ok(proxy_policy_may_connect(p, &nobody) && proxy_policy_may_connect(p, &root),
               "system bus: every user may connect (allow user=\"*\")");
        tap_ok(!own_ok(p, &nobody, "com.example.Foo") && !own_ok(p, &root, "com.example.Foo"),
               "system bus: nobody, not even root, may own an arbitrary name (deny own=\"*\")");
        if (has_hostname)
                tap_ok(own_ok(p, &root, "org.freedesktop.hostname1") && !own_ok(p, &nobody, "org.freedesktop.hostname1"),
                       "system bus: root may own org.freedesktop.hostname1, nobody may not");
        else
                tap_ok(true, "# SKIP no org.freedesktop.hostname1.conf");
        if (user_exists("polkitd", &polkitd) &&
            access("/usr/share/dbus-1/system.d/org.freedesktop.PolicyKit1.conf", R_OK) == 0)
                tap_ok(own_ok(p, &PEER(polkitd, polkitd), "org.freedesktop.PolicyKit1") &&
                       !own_ok(p, &root, "org.freedesktop.PolicyKit1"),
                       "system bus: polkitd may own org.freedesktop.PolicyKit1 (policy user=\"polkitd\"), root may not");
        else
                tap_ok(true, "# SKIP no polkitd");
        tap_ok(!send_ok(p, &nobody, NAMES(":1.77"), call("org.example.I", "M")) &&
               !send_ok(p, &root, NAMES(":1.77", "com.example.Foo"), call("org.example.I", "M")),
               "system bus: method calls are denied by default (root too)");
        tap_ok(send_ok(p, &nobody, NAMES("org.freedesktop.DBus"), call("org.freedesktop.DBus", "GetId")) &&
               send_ok(p, &nobody, NAMES("org.freedesktop.DBus"), call("org.freedesktop.DBus.Introspectable", "Introspect")),
               "system bus: anyone may call the driver");
        tap_ok(!send_ok(p, &nobody, NAMES("org.freedesktop.DBus"),
                        call("org.freedesktop.DBus", "UpdateActivationEnvironment")) &&
               !send_ok(p, &root, NAMES("org.freedesktop.DBus"),
                        call("org.freedesktop.DBus", "UpdateActivationEnvironment")),
               "system bus: UpdateActivationEnvironment is denied to everyone, root included");
        tap_ok(!send_ok(p, &nobody, NAMES("org.freedesktop.DBus"), call("org.freedesktop.DBus.Monitoring", "BecomeMonitor")) &&
               send_ok(p, &root, NAMES("org.freedesktop.DBus"), call("org.freedesktop.DBus.Monitoring", "BecomeMonitor")),
               "system bus: only root may call BecomeMonitor");
        if (has_hostname)
                tap_ok(send_ok(p, &nobody, NAMES(":1.3", "org.freedesktop.hostname1"),
                               call("org.freedesktop.hostname1", "SetHostname")) &&
                       recv_ok(p, &nobody, NAMES(":1.3", "org.freedesktop.hostname1"), reply(2, true)),
                       "system bus: hostname1.conf opens org.freedesktop.hostname1 to everybody");
        else
                tap_ok(true, "# SKIP no org.freedesktop.hostname1.conf");
        if (has_login1)
                tap_ok(send_ok(p, &nobody, NAMES(":1.4", "org.freedesktop.login1"),
                               call("org.freedesktop.login1.Manager", "ListSessions")) &&
                       !send_ok(p, &nobody, NAMES(":1.4", "org.freedesktop.login1"),
                                call("org.freedesktop.login1.Manager", "Frobnicate")) &&
                       !send_ok(p, &nobody, NAMES(":1.4", "org.freedesktop.login1"), call(NULL, "ListSessions")) &&
                       send_ok(p, &root, NAMES(":1.4", "org.freedesktop.login1"),
                               call("org.freedesktop.login1.Manager", "Frobnicate")),
                       "system bus: login1.conf: listed members only (an interface is needed), root anything");
        else
                tap_ok(true, "# SKIP no org.freedesktop.login1.conf");
        tap_ok(send_ok(p, &nobody, NULL, signal_msg(true)) && send_ok(p, &nobody, NAMES(":1.5"), reply(2, true)) &&
               !send_ok(p, &nobody, NAMES(":1.5"), reply(2, false)) && send_ok(p, &nobody, NAMES(":1.5"), reply(3, true)),
               "system bus: signals and requested replies may be sent, unrequested replies not");
        tap_ok(recv_ok(p, &nobody, NAMES(":1.5"), call("a.b", "C")) && recv_ok(p, &nobody, NAMES(":1.5"), signal_msg(true)) &&
               recv_ok(p, &nobody, NAMES(":1.5"), reply(3, true)),
               "system bus: everything may be received");
        dirs = proxy_policy_servicedirs(p);
        r = 0;
        for (size_t i = 0; dirs[i]; ++i)
                r |= strcmp(dirs[i], "/usr/share/dbus-1/system-services") == 0;
        tap_ok(r, "system bus: standard_system_servicedirs gives /usr/share/dbus-1/system-services");
        proxy_policy_free(p);
}

static void test_debian_session(void)
{
        const char *conf = "/usr/share/dbus-1/session.conf";
        struct proxy_policy *p = NULL;
        int r;

        if (access(conf, R_OK) < 0) {
                tap_ok(true, "# SKIP %s absent", conf);
                return;
        }
        warnings_begin();
        r = proxy_policy_load(&p, conf, err, sizeof(err));
        warnings_end();
        tap_ok(r == 0 && p && own_ok(p, &userA, "com.example.Any") &&
               send_ok(p, &userA, NAMES(":1.1"), call("a.b", "C")) &&
               recv_ok(p, &userA, NAMES(":1.1"), call("a.b", "C")) && proxy_policy_may_connect(p, &userA),
               "Debian's session.conf loads and allows everything (%s)", r ? err : "ok");
        proxy_policy_free(p);
}

static void cleanup(void)
{
        char *cmd;

        if (asprintf(&cmd, "rm -rf '%s'", tmpdir) >= 0) {
                if (system(cmd) != 0)
                        fprintf(stderr, "cannot remove %s\n", tmpdir);
                free(cmd);
        }
}

int main(void)
{
        if (!mkdtemp(tmpdir)) {
                perror("mkdtemp");
                return 1;
        }
        tap_plan(111);
        test_null_policy();
        test_send_attributes();
        test_receive_attributes();
        test_own();
        test_connect();
        test_precedence();
        test_rejected();
        test_files();
        test_corruptions();
        test_debian_system();
        test_debian_session();
        cleanup();
        return tap_done();
}
