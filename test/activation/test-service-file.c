// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Service file parsing (Documentation/activation.md): Exec= word splitting, the keys,
 * the naming rule, invalid files, directories and priorities. TAP.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "service-file.h"
#include "tap.h"

/* words joined with '|' for comparison */
static char *joined(char **argv)
{
        size_t len = 1;
        char *s;

        for (char **a = argv; *a; a++)
                len += strlen(*a) + 1;
        s = calloc(1, len);
        for (char **a = argv; *a; a++) {
                if (a != argv)
                        strcat(s, "|");
                strcat(s, *a);
        }
        return s;
}

static const struct {
        const char *in, *out;   /* out NULL: -EINVAL */
} split_cases[] = {
        { "/usr/bin/foo", "/usr/bin/foo" },
        { "  /a   b\tc  ", "/a|b|c" },
        { "/a 'x y' z", "/a|x y|z" },
        { "/a 'it\\'s", "/a|it\\s" },      /* backslash is literal in single quotes */
        { "/a \"x \\\" y\"", "/a|x \" y" },
        { "/a \"\\$HOME \\` \\\\ \\n\"", "/a|$HOME ` \\ \\n" },
        { "/a b\\ c", "/a|b c" },
        { "/a \\'q", "/a|'q" },
        { "/a ''", "/a|" },
        { "/a x''y\"z\"", "/a|xyz" },
        { "/a $HOME ~ *", "/a|$HOME|~|*" },     /* no expansion */
        { "/a \"unterminated", NULL },
        { "/a 'unterminated", NULL },
        { "/a trailing\\", NULL },
        { "", NULL },
        { "   ", NULL },
};

static const char *sys_ok =
        "# comment\n"
        "\n"
        "[D-BUS Service]\n"
        "Name = org.example.Foo\n"
        "Exec=/usr/bin/foo --system 'a b'\n"
        "User=messagebus\n"
        "SystemdService=foo.service\n"
        "AssumedAppArmorLabel=unconfined\n"
        "Unknown=ignored\n"
        "[Other Group]\n"
        "Name=org.example.Wrong\n";

static const struct {
        const char *text, *filename;
        enum service_bus_type type;
        int expect;
} parse_cases[] = {
        { "[D-BUS Service]\nName=org.a.B\nExec=/bin/x\n", "org.a.B.service", SERVICE_BUS_SYSTEM, -EINVAL },       /* no User= */
        { "[D-BUS Service]\nName=org.a.B\nExec=/bin/x\nUser=root\n", "other.service", SERVICE_BUS_SYSTEM, -EINVAL }, /* naming */
        { "[D-BUS Service]\nName=org.a.B\nExec=/bin/x\n", "other.service", SERVICE_BUS_USER, 0 },
        { "[D-BUS Service]\nExec=/bin/x\n", "x.service", SERVICE_BUS_USER, -EINVAL },          /* no Name= */
        { "[D-BUS Service]\nName=org.a.B\n", "x.service", SERVICE_BUS_USER, -EINVAL },         /* no Exec= */
        { "[D-BUS Service]\nName=org.a.B\nExec=bin/x\n", "x.service", SERVICE_BUS_USER, -EINVAL },     /* relative */
        { "[D-BUS Service]\nName=nodots\nExec=/bin/x\n", "x.service", SERVICE_BUS_USER, -EINVAL },
        { "[D-BUS Service]\nName=:1.5\nExec=/bin/x\n", "x.service", SERVICE_BUS_USER, -EINVAL },
        { "[D-BUS Service]\nName=org.1a.B\nExec=/bin/x\n", "x.service", SERVICE_BUS_USER, -EINVAL },
        { "[D-BUS Service]\nName=org..B\nExec=/bin/x\n", "x.service", SERVICE_BUS_USER, -EINVAL },
        { "[D-BUS Service]\nName=org.freedesktop.DBus\nExec=/bin/x\n", "x.service", SERVICE_BUS_USER, -EINVAL },
        { "[D-BUS Service\nName=org.a.B\nExec=/bin/x\n", "x.service", SERVICE_BUS_USER, -EINVAL },
        { "[D-BUS Service]\nName=org.a.B\nExec=/bin/x\njunk line\n", "x.service", SERVICE_BUS_USER, -EINVAL },
        { "[D-BUS Service]\nName=org.a.B\nExec=/bin/x 'open\n", "x.service", SERVICE_BUS_USER, -EINVAL },
        { "[Other]\nName=org.a.B\nExec=/bin/x\n", "x.service", SERVICE_BUS_USER, -EINVAL },
        { "[D-BUS Service]\nName=org.a.\xff\nExec=/bin/x\n", "x.service", SERVICE_BUS_USER, -EINVAL },  /* UTF-8 */
        { "[D-BUS Service]\nName=org.a.B\nExec=/bin/false\nSystemdService=b.service\n", "x.service", SERVICE_BUS_USER, -ENOENT },
        { "[D-BUS Service]\nName=org.a.B\nSystemdService=b.service\n", "x.service", SERVICE_BUS_USER, -ENOENT },
        { "[D-BUS Service]\nName=org.a.B\nExec=/bin/x\nSystemdService=b.service\n", "x.service", SERVICE_BUS_USER, 0 },
        { "[D-BUS Service]\nName=org.a.B\nExec=/bin/x\n[D-BUS Service]\nName=org.a.C\n", "x.service", SERVICE_BUS_USER, -EINVAL },
        { "  [D-BUS Service]  \n  Name  =  org.a-b._C  \n\tExec\t=\t/bin/x\t\n", "x.service", SERVICE_BUS_USER, 0 },
};

static void write_file(const char *dir, const char *name, const char *text)
{
        char *p;
        FILE *f;

        if (asprintf(&p, "%s/%s", dir, name) < 0)
                exit(2);
        f = fopen(p, "w");
        if (!f)
                exit(2);
        fputs(text, f);
        fclose(f);
        free(p);
}

static char *svc(const char *name, const char *exec, const char *user)
{
        char *s;

        if (asprintf(&s, "[D-BUS Service]\nName=%s\nExec=%s\n%s%s\n", name, exec,
                     user ? "User=" : "", user ?: "") < 0)
                exit(2);
        return s;
}

int main(void)
{
        size_t n_split = sizeof(split_cases) / sizeof(split_cases[0]);
        size_t n_parse = sizeof(parse_cases) / sizeof(parse_cases[0]);
        struct service_entry e;
        const char *why;
        char **argv;
        int r;

        tap_plan(n_split + n_parse + 6 + 8 + 3);

        for (size_t i = 0; i < n_split; i++) {
                r = service_exec_split(split_cases[i].in, &argv);
                if (!split_cases[i].out) {
                        tap_ok(r == -EINVAL, "split [%s] is rejected (%d)", split_cases[i].in, r);
                        if (r == 0)
                                service_strv_free(argv);
                        continue;
                }
                if (r < 0) {
                        tap_ok(false, "split [%s] -> [%s] (error %d)", split_cases[i].in,
                               split_cases[i].out, r);
                        continue;
                }
                char *j = joined(argv);

                tap_ok(!strcmp(j, split_cases[i].out), "split [%s] -> [%s] (got [%s])",
                       split_cases[i].in, split_cases[i].out, j);
                free(j);
                service_strv_free(argv);
        }

        r = service_file_parse(sys_ok, strlen(sys_ok), "org.example.Foo.service",
                               SERVICE_BUS_SYSTEM, false, &e, &why);
        tap_ok(r == 0, "a complete system service file parses (%d %s)", r, why ?: "");
        if (r == 0) {
                char *j = joined(e.argv);

                tap_ok(!strcmp(e.name, "org.example.Foo"), "Name= with blanks around '=' (%s)", e.name);
                tap_ok(!strcmp(j, "/usr/bin/foo|--system|a b"), "Exec= words (%s)", j);
                tap_ok(e.user && !strcmp(e.user, "messagebus"), "User=");
                tap_ok(e.systemd_service && !strcmp(e.systemd_service, "foo.service"), "SystemdService=");
                free(j);
                service_entry_free(&e);
        } else {
                for (int i = 0; i < 4; i++)
                        tap_ok(false, "complete file fields");
        }
        r = service_file_parse(sys_ok, strlen(sys_ok), "org.example.Foo.service",
                               SERVICE_BUS_USER, false, &e, &why);
        tap_ok(r == 0 && !e.user, "User= is ignored on a user bus");
        if (r == 0)
                service_entry_free(&e);

        for (size_t i = 0; i < n_parse; i++) {
                why = NULL;
                r = service_file_parse(parse_cases[i].text, strlen(parse_cases[i].text),
                                       parse_cases[i].filename, parse_cases[i].type, false, &e, &why);
                tap_ok(r == parse_cases[i].expect, "parse case %zu: %d (expected %d; %s)", i, r,
                       parse_cases[i].expect, why ?: "ok");
                if (r == 0)
                        service_entry_free(&e);
        }

        /* directories: priority, alphabetical order within one, invalid files skipped */
        char tmpl[] = "/tmp/test-service-file.XXXXXX";
        char *root = mkdtemp(tmpl), hi[300], lo[300];
        char *extra[] = { hi, lo, NULL }, **dirs;
        struct service_table t = { 0 };
        const struct service_entry *f;
        char *s;

        snprintf(hi, sizeof(hi), "%s/hi", root);
        snprintf(lo, sizeof(lo), "%s/lo", root);
        mkdir(hi, 0755);
        mkdir(lo, 0755);
        write_file(hi, "b.service", s = svc("org.t.Dup", "/bin/hi-b", NULL)); free(s);
        write_file(hi, "a.service", s = svc("org.t.Dup", "/bin/hi-a", NULL)); free(s);
        write_file(lo, "a.service", s = svc("org.t.Dup", "/bin/lo", NULL)); free(s);
        write_file(lo, "c.service", s = svc("org.t.Low", "/bin/low", NULL)); free(s);
        write_file(lo, "bad.service", "this is not a service file\n");
        write_file(lo, "d.txt", s = svc("org.t.NotService", "/bin/x", NULL)); free(s);

        setenv("XDG_RUNTIME_DIR", "/nonexistent-run", 1);
        setenv("XDG_DATA_HOME", "/nonexistent-home", 1);
        setenv("XDG_DATA_DIRS", "/nonexistent-a::/nonexistent-b", 1);
        r = service_dirs(SERVICE_BUS_USER, extra, &dirs);
        tap_ok(r == 0 && dirs[0] && !strcmp(dirs[0], "/nonexistent-run/dbus-1/services") &&
               dirs[1] && !strcmp(dirs[1], "/nonexistent-home/dbus-1/services") &&
               dirs[2] && !strcmp(dirs[2], "/nonexistent-a/dbus-1/services") &&
               dirs[3] && !strcmp(dirs[3], "/nonexistent-b/dbus-1/services"),
               "user bus directories in order, then <servicedir>s");
        tap_ok(r == 0 && !strcmp(dirs[4], hi) && !strcmp(dirs[5], lo) && !dirs[6],
               "<servicedir>s come last");
        r = service_table_load(SERVICE_BUS_USER, dirs, false, &t);
        tap_ok(r == 0 && t.n_entries == 2, "two names load from the directories (%zu)", t.n_entries);
        f = service_table_find(&t, "org.t.Dup");
        tap_ok(f && !strcmp(f->argv[0], "/bin/hi-a") && f->priority == 4,
               "the higher-priority directory and the alphabetically first file win (%s)",
               f ? f->argv[0] : "none");
        f = service_table_find(&t, "org.t.Low");
        tap_ok(f && !strcmp(f->argv[0], "/bin/low"), "a name only in the lower directory loads");
        tap_ok(!service_table_find(&t, "org.t.NotService"), "files not ending in .service are not read");
        service_table_free(&t);
        service_strv_free(dirs);

        unsetenv("XDG_DATA_HOME");
        unsetenv("XDG_DATA_DIRS");
        unsetenv("XDG_RUNTIME_DIR");
        setenv("HOME", "/home/u", 1);
        r = service_dirs(SERVICE_BUS_USER, NULL, &dirs);
        tap_ok(r == 0 && !strcmp(dirs[0], "/home/u/.local/share/dbus-1/services") &&
               !strcmp(dirs[1], "/usr/local/share/dbus-1/services") &&
               !strcmp(dirs[2], "/usr/share/dbus-1/services") && !dirs[3],
               "user bus defaults for XDG_DATA_HOME and XDG_DATA_DIRS");
        service_strv_free(dirs);
        r = service_dirs(SERVICE_BUS_SYSTEM, NULL, &dirs);
        tap_ok(r == 0 && !strcmp(dirs[0], "/usr/local/share/dbus-1/system-services") &&
               !strcmp(dirs[1], "/usr/share/dbus-1/system-services") &&
               !strcmp(dirs[2], "/lib/dbus-1/system-services") && !dirs[3],
               "system bus directories");
        service_strv_free(dirs);

        /* system bus: wrong file name skipped, right one loads */
        char sysd[300];

        snprintf(sysd, sizeof(sysd), "%s/sys", root);
        mkdir(sysd, 0755);
        write_file(sysd, "wrong.service", s = svc("org.t.Sys", "/bin/sys", "root")); free(s);
        write_file(sysd, "org.t.Sys2.service", s = svc("org.t.Sys2", "/bin/sys2", "root")); free(s);
        char *sysdirs[] = { sysd, NULL };

        r = service_table_load(SERVICE_BUS_SYSTEM, sysdirs, false, &t);
        tap_ok(r == 0 && t.n_entries == 1 && !strcmp(t.entries[0].name, "org.t.Sys2"),
               "system bus: a file not named <Name>.service is skipped");
        service_table_free(&t);
        char *none[] = { "/nonexistent-dir", NULL };

        r = service_table_load(SERVICE_BUS_SYSTEM, none, false, &t);
        tap_ok(r == 0 && t.n_entries == 0, "a missing directory is no error");
        char *cmd;

        if (asprintf(&cmd, "rm -rf '%s'", root) > 0) {
                r = system(cmd);
                free(cmd);
        }
        tap_ok(r == 0, "cleanup");
        return tap_done();
}
