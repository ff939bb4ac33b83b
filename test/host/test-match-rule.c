// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Host tests for the match-rule parser (the D-Bus Specification), equality,
 * the userspace check, bloom masks and the kdbus match entries of a rule
 * (kdbus.match(7)).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/kdbus.h>

#include "bloom.h"
#include "match-rule.h"
#include "message.h"
#include "tap.h"

#define ok tap_ok

static int parse(const char *text, bool has)
{
        struct kdbus_match_rule *rule = NULL;
        int r = kdbus_match_rule_parse(&rule, text, has);

        kdbus_match_rule_free(rule);
        return r;
}

static void test_grammar(void)
{
        struct kdbus_match_rule *r = NULL;
        char big[1100];

        ok(parse("", false) == 0, "empty rule is valid");
        ok(parse("type='signal'", false) == 0, "type='signal'");
        ok(parse("type='signal',", false) == 0, "trailing comma accepted");
        ok(parse("  type ='signal'", false) == 0, "white space before key and around = skipped");
        ok(parse("type= 'signal'", false) == -EINVAL, "white space after = belongs to the value");
        ok(parse("type='signal' ", false) == -EINVAL, "unquoted trailing space kept: invalid type");
        ok(parse("type='signal',,member='x'", false) == -EINVAL, ",, is invalid");
        ok(parse("type", false) == -EINVAL, "pair without = is invalid");
        ok(parse("type='signal", false) == -EINVAL, "unterminated quote is invalid");
        ok(parse("type='bogus'", false) == -EINVAL, "unknown type");
        ok(parse("Type='signal'", false) == -EINVAL, "keys are case-sensitive");
        ok(parse("type='signal',type='signal'", false) == -EINVAL, "duplicate key");
        ok(parse("path='/a',path_namespace='/b'", false) == -EINVAL, "path and path_namespace conflict");
        ok(parse("arg1='a',arg1path='/a'", false) == -EINVAL, "argN and argNpath conflict");
        ok(parse("arg63='x'", false) == 0, "arg63 is the highest");
        ok(parse("arg64='x'", false) == -EINVAL, "arg64 is invalid");
        ok(parse("argx='x'", false) == -EINVAL, "arg without number");
        ok(parse("arg1namespace='a.b'", false) == -EINVAL, "only arg0namespace exists");
        ok(parse("arg0namespace='a.b'", false) == 0, "arg0namespace");
        ok(parse("arg0namespace='a..b'", false) == -EINVAL, "arg0namespace with empty element");
        ok(parse("arg0namespace='1a'", false) == -EINVAL, "arg0namespace element starting with a digit");
        ok(parse("arg2has='x'", false) == -EINVAL, "arg<N>has refused by default (dbus-daemon)");
        ok(parse("arg2has='x'", true) == 0, "arg<N>has accepted in the native API");
        ok(parse("interface='noperiod'", false) == -EINVAL, "invalid interface");
        ok(parse("member='a.b'", false) == -EINVAL, "invalid member");
        ok(parse("path='/a/'", false) == -EINVAL, "invalid path");
        ok(parse("path_namespace='/'", false) == 0, "path_namespace='/' allowed");
        ok(parse("sender=':1.42'", false) == 0, "unique sender");
        ok(parse("sender='org.freedesktop.DBus'", false) == 0, "driver sender");
        ok(parse("sender='a'", false) == -EINVAL, "invalid sender");
        ok(parse("eavesdrop='true'", false) == 0 && parse("eavesdrop='yes'", false) == -EINVAL,
           "eavesdrop true/false only");
        ok(parse("foo='bar'", false) == -EINVAL, "unknown key");

        memset(big, 'a', sizeof(big));
        memcpy(big, "arg0='", 6);
        big[1023] = '\'';
        big[1024] = 0;
        ok(parse(big, false) == 0, "a rule of exactly 1024 bytes is accepted");
        big[1023] = 'a';
        big[1024] = '\'';
        big[1025] = 0;
        ok(parse(big, false) == -E2BIG, "1025 bytes: E2BIG (LimitsExceeded, not MatchRuleInvalid)");

        ok(kdbus_match_rule_parse(&r, "arg00='x'", false) == 0 && r->arg_kind[0] == KDBUS_MATCH_ARG_STRING &&
           strcmp(r->arg[0], "x") == 0, "arg00 is arg0");
        kdbus_match_rule_free(r);
        ok(kdbus_match_rule_parse(&r, "arg0='a''b'", false) == 0 && strcmp(r->arg[0], "ab") == 0,
           "quoted pieces concatenate");
        kdbus_match_rule_free(r);
        ok(kdbus_match_rule_parse(&r, "arg0=a\\'b", false) == 0 && strcmp(r->arg[0], "a'b") == 0,
           "backslash-apostrophe outside quotes is an apostrophe");
        kdbus_match_rule_free(r);
        ok(kdbus_match_rule_parse(&r, "arg0='a\\b,c'", false) == 0 && strcmp(r->arg[0], "a\\b,c") == 0,
           "inside quotes backslash and comma stand for themselves");
        kdbus_match_rule_free(r);
        ok(kdbus_match_rule_parse(&r, "arg0=a\\b", false) == 0 && strcmp(r->arg[0], "a\\b") == 0,
           "other backslashes stand for themselves");
        kdbus_match_rule_free(r);
        ok(kdbus_match_rule_parse(&r, "arg3=''", false) == 0 && strcmp(r->arg[3], "") == 0,
           "empty argument value");
        kdbus_match_rule_free(r);
}

static void test_equality(void)
{
        struct kdbus_match_rule *a = NULL, *b = NULL, *c = NULL;
        char *text = NULL;

        kdbus_match_rule_parse(&a, "type='signal',member='Foo',arg1='x'", false);
        kdbus_match_rule_parse(&b, " arg1=x,member=Foo,type='signal',eavesdrop='false'", false);
        kdbus_match_rule_parse(&c, "type='signal',member='Foo',arg1='y'", false);
        ok(a && b && kdbus_match_rule_equal(a, b), "order, quoting and eavesdrop='false' are irrelevant");
        ok(a && c && !kdbus_match_rule_equal(a, c), "different values differ");
        ok(kdbus_match_rule_format(a, &text) == 0 &&
           strcmp(text, "type='signal',member='Foo',arg1='x'") == 0, "canonical text: %s", text);
        free(text);
        kdbus_match_rule_free(a);
        kdbus_match_rule_free(b);
        kdbus_match_rule_free(c);

        kdbus_match_rule_parse(&a, "arg0='it''s'", false);
        kdbus_match_rule_format(a, &text);
        kdbus_match_rule_parse(&b, text, false);
        ok(b && kdbus_match_rule_equal(a, b), "formatted text parses back to an equal rule (%s)", text);
        free(text);
        kdbus_match_rule_free(a);
        kdbus_match_rule_free(b);
}

static struct kdbus_message *signal_msg(const char *path, const char *iface, const char *member,
                                        const char *sender)
{
        struct kdbus_message *m = NULL;

        kdbus_message_new_signal(&m, path, iface, member);
        kdbus_message_append(m, "sosas", "org.example.Foo", "/org/example/sub", "/org/", 2, "a", "b");
        kdbus_message_seal(m, 5, sender);
        return m;
}

static bool matches(const char *text, struct kdbus_message *m, const struct kdbus_match_context *ctx)
{
        struct kdbus_match_rule *rule = NULL;
        bool r;

        if (kdbus_match_rule_parse(&rule, text, true) < 0)
                return false;
        r = kdbus_match_rule_matches(rule, m, ctx);
        kdbus_match_rule_free(rule);
        return r;
}

static void test_matching(void)
{
        static const char *const names[] = { "org.example.Owner" };
        struct kdbus_match_context ctx = {
                .sender_names = names, .n_sender_names = 1, .own_unique = ":1.9",
        };
        struct kdbus_match_context drv = { .from_driver = true, .own_unique = ":1.9" };
        struct kdbus_message *m = signal_msg("/org/example/obj", "org.example.Iface", "Changed", ":1.7");
        struct kdbus_message *u = NULL;
        const char *s;

        ok(matches("", m, &ctx), "empty rule matches");
        ok(matches("type='signal',interface='org.example.Iface',member='Changed'", m, &ctx), "header keys");
        ok(!matches("type='method_call'", m, &ctx), "type mismatch");
        ok(matches("sender=':1.7'", m, &ctx) && !matches("sender=':1.8'", m, &ctx), "unique sender");
        ok(matches("sender='org.example.Owner'", m, &ctx) && !matches("sender='org.example.Other'", m, &ctx),
           "well-known sender from OWNED_NAME metadata");
        ok(!matches("sender='org.freedesktop.DBus'", m, &ctx) &&
           matches("sender='org.freedesktop.DBus'", m, &drv) && !matches("sender=':1.7'", m, &drv),
           "driver sender only for synthesised messages");
        ok(matches("path_namespace='/org/example'", m, &ctx) && matches("path_namespace='/'", m, &ctx) &&
           !matches("path_namespace='/org/ex'", m, &ctx), "path_namespace needs a / boundary");
        ok(matches("arg0='org.example.Foo'", m, &ctx) && !matches("arg0='org'", m, &ctx), "arg0");
        ok(matches("arg0namespace='org.example'", m, &ctx) && !matches("arg0namespace='org.ex'", m, &ctx),
           "arg0namespace");
        ok(matches("arg1path='/org/example/'", m, &ctx) && matches("arg2path='/org/example/sub'", m, &ctx) &&
           matches("arg1path='/org/example/sub'", m, &ctx) && !matches("arg1path='/org/other/'", m, &ctx),
           "argNpath both directions");
        ok(!matches("arg1='/org/example/sub'", m, &ctx), "argN only matches STRING, not OBJECT_PATH");
        ok(matches("arg3has='b'", m, &ctx) && !matches("arg3has='c'", m, &ctx), "arg3has on an as");
        ok(!matches("arg3='a'", m, &ctx), "argN on an array never matches");
        ok(!matches("destination=':1.9'", m, &ctx), "destination needs a DESTINATION");
        ok(kdbus_message_read(m, "s", &s) == 0 && strcmp(s, "org.example.Foo") == 0,
           "matching leaves the read position rewound");

        kdbus_message_new_signal(&u, "/a", "a.b", "C");
        kdbus_message_set_destination(u, ":1.3");
        kdbus_message_seal(u, 1, ":1.7");
        ok(!matches("type='signal'", u, &ctx) && matches("type='signal',eavesdrop='true'", u, &ctx),
           "a message for another connection needs eavesdrop");
        kdbus_message_unref(u);
        kdbus_message_unref(m);
}

static void hex_mask(const struct kdbus_match_rule *rule, uint8_t out[64])
{
        uint64_t data[8];
        struct kdbus_bloom b;

        kdbus_bloom_init(&b, data, 64, 8);
        kdbus_bloom_clear(&b);
        kdbus_match_rule_bloom_mask(rule, &b);
        memcpy(out, data, 64);
}

static void test_masks(void)
{
        static const uint8_t want1[64] = {
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x48, 0x10, 0x00, 0x00,
                0x30, 0x05, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x02, 0x00, 0x02, 0x00, 0x08, 0x00,
                0x08, 0x02, 0x00, 0x00, 0x00, 0x00, 0x20, 0x81, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80,
                0x10, 0x00, 0x08, 0x00, 0x00, 0x81, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
        };
        static const uint8_t want2[64] = {
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x40, 0x10, 0x00, 0x00,
                0x10, 0x04, 0x00, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80,
                0x10, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x04, 0x00, 0x00, 0x02,
        };
        struct kdbus_match_rule *rule = NULL;
        uint8_t got[64];

        kdbus_match_rule_parse(&rule, "type='signal',interface='org.example.Iface',arg0='hello'", false);
        hex_mask(rule, got);
        ok(memcmp(got, want1, 64) == 0, "mask of test-vector rule 1");
        kdbus_match_rule_free(rule);

        kdbus_match_rule_parse(&rule, "type='signal',path_namespace='/org/example'", false);
        hex_mask(rule, got);
        ok(memcmp(got, want2, 64) == 0, "mask of test-vector rule 2");
        kdbus_match_rule_free(rule);
}

static size_t entries(const char *text, struct kdbus_cmd_match ***ret)
{
        struct kdbus_match_rule *rule = NULL;
        size_t n = 0;

        *ret = NULL;
        if (kdbus_match_rule_parse(&rule, text, false) < 0)
                return (size_t)-1;
        if (kdbus_match_rule_to_kernel(rule, 64, 8, 42, ret, &n) < 0)
                n = (size_t)-1;
        kdbus_match_rule_free(rule);
        return n;
}

static void test_kernel_entries(void)
{
        struct kdbus_cmd_match **e = NULL;
        size_t n;

        n = entries("", &e);
        ok(n == 6 && e[0]->size == sizeof(struct kdbus_cmd_match) && e[0]->cookie == 42,
           "empty rule: six entries, the first one without items (%zu)", n);
        ok(n == 6 && e[1]->items[0].type == KDBUS_ITEM_NAME_ADD &&
           e[2]->items[0].type == KDBUS_ITEM_NAME_REMOVE && e[3]->items[0].type == KDBUS_ITEM_NAME_CHANGE &&
           e[4]->items[0].type == KDBUS_ITEM_ID_ADD && e[5]->items[0].type == KDBUS_ITEM_ID_REMOVE &&
           e[4]->items[0].id_change.id == KDBUS_MATCH_ID_ANY,
           "empty rule: NAME_ADD, NAME_REMOVE, NAME_CHANGE, ID_ADD, ID_REMOVE(any)");
        kdbus_match_entries_free(e, n);

        n = entries("member='NameOwnerChanged',arg0=':x'", &e);
        ok(n == 1 && e[0]->items[0].type == KDBUS_ITEM_BLOOM_MASK,
           "without sender the rule also gets entry A for peer signals (%zu)", n);
        kdbus_match_entries_free(e, n);

        n = entries("type='method_call'", &e);
        ok(n == 0, "type='method_call' installs nothing (%zu)", n);
        kdbus_match_entries_free(e, n);

        n = entries("sender=':2.7'", &e);
        ok(n == 0, "unparsable unique sender installs nothing (%zu)", n);
        kdbus_match_entries_free(e, n);

        n = entries("type='signal',sender=':1.7',interface='a.b'", &e);
        ok(n == 1 && e[0]->items[0].type == KDBUS_ITEM_ID && e[0]->items[0].id == 7 &&
           ((struct kdbus_item *)((uint8_t *)e[0]->items + 24))->type == KDBUS_ITEM_BLOOM_MASK,
           "unique sender: ID item and a bloom mask (%zu)", n);
        kdbus_match_entries_free(e, n);

        n = entries("type='signal',sender='org.example.X'", &e);
        ok(n == 1 && e[0]->items[0].type == KDBUS_ITEM_NAME && strcmp((const char *)e[0]->items[0].data, "org.example.X") == 0,
           "well-known sender: NAME item (%zu)", n);
        kdbus_match_entries_free(e, n);

        n = entries("sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='org.example.X'", &e);
        ok(n == 3 && e[0]->items[0].type == KDBUS_ITEM_NAME_ADD &&
           strcmp((const char *)&e[0]->items[0].name_change +
                  sizeof(struct kdbus_notify_name_change), "org.example.X") == 0 &&
           e[2]->items[0].type == KDBUS_ITEM_NAME_CHANGE,
           "NameOwnerChanged for one name: NAME_ADD/REMOVE/CHANGE with the name (%zu)", n);
        kdbus_match_entries_free(e, n);

        n = entries("sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0=':1.5',arg2=''", &e);
        ok(n == 2 && e[0]->items[0].type == KDBUS_ITEM_ID_ADD && e[0]->items[0].id_change.id == 5 &&
           e[1]->items[0].type == KDBUS_ITEM_ID_REMOVE && e[1]->items[0].id_change.id == 5,
           "arg0=':1.5': ID kind only, ID_ADD and ID_REMOVE for id 5 (%zu)", n);
        kdbus_match_entries_free(e, n);

        n = entries("sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0=':x'", &e);
        ok(n == 0, "unparsable unique arg0: nothing (%zu)", n);
        kdbus_match_entries_free(e, n);

        ok(kdbus_unique_name_parse(":1.18446744073709551614", NULL) &&
           !kdbus_unique_name_parse(":1.18446744073709551615", NULL) &&
           !kdbus_unique_name_parse(":1.0", NULL) && !kdbus_unique_name_parse(":1.", NULL) &&
           !kdbus_unique_name_parse(":1.+5", NULL), "unique name parsing bounds");
}

int main(void)
{
        tap_plan(73);
        test_grammar();
        test_equality();
        test_matching();
        test_masks();
        test_kernel_entries();
        return tap_done();
}
