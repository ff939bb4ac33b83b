// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The uapi header against test/host/abi-generated.h: every sizeof, _Alignof,
 * offsetof, member size, constant, ioctl request (value and decoded
 * dir/type/nr/size) and enum storage size. The rows come mechanically from
 * the 2015 ABI's verification tables (gen-abi.py -> abi-generated.h) and
 * are checked twice: as
 * static assertions, which fail the build, and at run time, which reports
 * them as TAP. A program built against the 2015 header must run against
 * ours unchanged; one wrong offset silently breaks it.
 *
 * This file is valid C and C++, so the C++ layout is asserted too. With
 * ABI_STATIC_ONLY defined only the assertions are compiled (no libc
 * needed), which lets the Makefile check other targets (i386, aarch64).
 */

#include <stddef.h>
#include <linux/kdbus.h>

#ifdef __cplusplus
#define ABI_ASSERT(expr, msg) static_assert(expr, msg)
#define ABI_ALIGNOF_OP(t) alignof(t)
#else
#define ABI_ASSERT(expr, msg) _Static_assert(expr, msg)
#define ABI_ALIGNOF_OP(t) _Alignof(t)
#endif

#ifndef _UAPI_KDBUS_H_
#error "include guard _UAPI_KDBUS_H_ missing"
#endif

/* ---- pass 1: static assertions (a wrong row fails the build) ---- */

#define ABI_SIZEOF(s, n) \
        ABI_ASSERT(sizeof(struct s) == (n), "sizeof(struct " #s ") == " #n);
#define ABI_ALIGNOF(s, n) \
        ABI_ASSERT(ABI_ALIGNOF_OP(struct s) == (n), "_Alignof(struct " #s ") == " #n);
#define ABI_OFFSETOF(s, f, n) \
        ABI_ASSERT(offsetof(struct s, f) == (n), "offsetof(struct " #s ", " #f ") == " #n);
#define ABI_MEMBER_SIZE(s, f, n) \
        ABI_ASSERT(sizeof(((struct s *)0)->f) == (n), "sizeof(" #s "." #f ") == " #n);
/* a trailing array: must be indexable (array of elements), adds no size */
#define ABI_FLEX(s, f) \
        ABI_ASSERT(sizeof(((struct s *)0)->f[0]) > 0, #s "." #f " is an array");
#define ABI_IOCTL(r, v, d, t, nr, sz) \
        ABI_ASSERT((unsigned long long)(r) == (v), #r " == " #v); \
        ABI_ASSERT(_IOC_DIR(r) == (d), "_IOC_DIR(" #r ") == " #d); \
        ABI_ASSERT(_IOC_TYPE(r) == (t), "_IOC_TYPE(" #r ") == " #t); \
        ABI_ASSERT(_IOC_NR(r) == (nr), "_IOC_NR(" #r ") == " #nr); \
        ABI_ASSERT(_IOC_SIZE(r) == (sz), "_IOC_SIZE(" #r ") == " #sz);
#define ABI_CONST(c, v) \
        ABI_ASSERT((unsigned long long)(c) == (v), #c " == " #v);
#define ABI_ENUM_SIZE(e, n) \
        ABI_ASSERT(sizeof(enum e) == (n), "sizeof(enum " #e ") == " #n);

#include "abi-generated.h"

#undef ABI_SIZEOF
#undef ABI_ALIGNOF
#undef ABI_OFFSETOF
#undef ABI_MEMBER_SIZE
#undef ABI_FLEX
#undef ABI_IOCTL
#undef ABI_CONST
#undef ABI_ENUM_SIZE

/*
 * ABI rules stated in prose (kdbus(7), kdbus.item(7)) rather than in the
 * generated tables.
 */

/* zero IDs are the int literal (0), all-ones IDs and NEGOTIATE are ULL */
ABI_ASSERT(sizeof(KDBUS_SRC_ID_KERNEL) == sizeof(int), "KDBUS_SRC_ID_KERNEL is (0)");
ABI_ASSERT(sizeof(KDBUS_DST_ID_NAME) == sizeof(int), "KDBUS_DST_ID_NAME is (0)");
ABI_ASSERT(sizeof(KDBUS_MATCH_ID_ANY) == sizeof(unsigned long long) &&
           KDBUS_MATCH_ID_ANY > 0, "KDBUS_MATCH_ID_ANY is (~0ULL)");
ABI_ASSERT(sizeof(KDBUS_DST_ID_BROADCAST) == sizeof(unsigned long long) &&
           KDBUS_DST_ID_BROADCAST > 0, "KDBUS_DST_ID_BROADCAST is (~0ULL)");
ABI_ASSERT(sizeof(KDBUS_FLAG_NEGOTIATE) == sizeof(unsigned long long) &&
           KDBUS_FLAG_NEGOTIATE > 0, "KDBUS_FLAG_NEGOTIATE is (1ULL << 63)");

/* the metadata item for attach flag bit n is 0x1000 + n */
#define ATTACH_ITEM(name, bit) \
        ABI_ASSERT(KDBUS_ATTACH_##name == (1ULL << (bit)) && \
                   KDBUS_ITEM_##name == _KDBUS_ITEM_ATTACH_BASE + (bit), \
                   "KDBUS_ATTACH_" #name " <-> KDBUS_ITEM_" #name);
ATTACH_ITEM(TIMESTAMP, 0)
ATTACH_ITEM(CREDS, 1)
ATTACH_ITEM(PIDS, 2)
ATTACH_ITEM(AUXGROUPS, 3)
ABI_ASSERT(KDBUS_ATTACH_NAMES == (1ULL << 4) &&
           KDBUS_ITEM_OWNED_NAME == _KDBUS_ITEM_ATTACH_BASE + 4,
           "KDBUS_ATTACH_NAMES <-> KDBUS_ITEM_OWNED_NAME");
ATTACH_ITEM(TID_COMM, 5)
ATTACH_ITEM(PID_COMM, 6)
ATTACH_ITEM(EXE, 7)
ATTACH_ITEM(CMDLINE, 8)
ATTACH_ITEM(CGROUP, 9)
ATTACH_ITEM(CAPS, 10)
ATTACH_ITEM(SECLABEL, 11)
ATTACH_ITEM(AUDIT, 12)
ATTACH_ITEM(CONN_DESCRIPTION, 13)
ABI_ASSERT(_KDBUS_ATTACH_ALL == (KDBUS_ATTACH_CONN_DESCRIPTION << 1) - 1,
           "_KDBUS_ATTACH_ALL covers bits 0..13");

/* the item payload starts at 16 (KDBUS_ITEM_HEADER_SIZE) */
ABI_ASSERT(offsetof(struct kdbus_item, data) == 16, "item header is 16 bytes");
ABI_ASSERT(sizeof(int) == 4, "sizeof(int) == 4");

#ifndef ABI_STATIC_ONLY

/* ---- pass 2: the same rows at run time, reported as TAP ---- */

#include <stdio.h>
#include <string.h>

#include "tap.h"

struct abi_check {
        const char *section;
        const char *what;
        unsigned long long got;
        unsigned long long want;
};

#define ABI_ROW(sec, what, got, want) \
        { sec, what, (unsigned long long)(got), (unsigned long long)(want) },

#define ABI_SIZEOF(s, n) \
        ABI_ROW("sizeof", "sizeof(struct " #s ")", sizeof(struct s), n)
#define ABI_ALIGNOF(s, n) \
        ABI_ROW("alignof", "_Alignof(struct " #s ")", ABI_ALIGNOF_OP(struct s), n)
#define ABI_OFFSETOF(s, f, n) \
        ABI_ROW("offsetof", "offsetof(struct " #s ", " #f ")", offsetof(struct s, f), n)
#define ABI_MEMBER_SIZE(s, f, n) \
        ABI_ROW("member size", "sizeof(" #s "." #f ")", sizeof(((struct s *)0)->f), n)
#define ABI_FLEX(s, f)
#define ABI_IOCTL(r, v, d, t, nr, sz) \
        ABI_ROW("ioctl value", #r, r, v) \
        ABI_ROW("ioctl decode", "_IOC_DIR(" #r ")", _IOC_DIR(r), d) \
        ABI_ROW("ioctl decode", "_IOC_TYPE(" #r ")", _IOC_TYPE(r), t) \
        ABI_ROW("ioctl decode", "_IOC_NR(" #r ")", _IOC_NR(r), nr) \
        ABI_ROW("ioctl decode", "_IOC_SIZE(" #r ")", _IOC_SIZE(r), sz)
#define ABI_CONST(c, v) \
        ABI_ROW("constant", #c, c, v)
#define ABI_ENUM_SIZE(e, n) \
        ABI_ROW("enum size", "sizeof(enum " #e ")", sizeof(enum e), n)

static const struct abi_check checks[] = {
#include "abi-generated.h"
};

static const char *const sections[] = {
        "sizeof", "alignof", "offsetof", "member size",
        "ioctl value", "ioctl decode", "constant", "enum size",
};

static int same(const char *a, const char *b)
{
        while (*a && *a == *b) {
                ++a;
                ++b;
        }
        return *a == *b;
}

/* a message laid out by hand through the header, as kdbus.message(7) has it */
static int check_item_walk(void)
{
        union {
                unsigned long long align;
                unsigned char bytes[256];      /* room for sizeof(struct kdbus_item) */
        } buf = { 0 };
        struct kdbus_msg *msg = (struct kdbus_msg *)buf.bytes;
        struct kdbus_item *item;
        unsigned long long vec_size, vec_offset;

        msg->size = 64 + 32 + 24;
        item = msg->items;
        item->size = 32;
        item->type = KDBUS_ITEM_PAYLOAD_OFF;
        item->vec.size = 5;
        item->vec.offset = 136;
        item = (struct kdbus_item *)((unsigned char *)item + ((item->size + 7) & ~7ULL));
        item->size = 20;
        item->type = KDBUS_ITEM_CANCEL_FD;
        item->fds[0] = -1;

        memcpy(&vec_size, buf.bytes + 64 + 16, sizeof(vec_size));
        memcpy(&vec_offset, buf.bytes + 64 + 24, sizeof(vec_offset));

        return (unsigned char *)msg->items - buf.bytes == 64 &&
               vec_size == 5 && vec_offset == 136 &&
               (unsigned char *)item - buf.bytes == 96 &&
               (unsigned char *)&item->fds[0] - buf.bytes == 112;
}

int main(void)
{
        size_t n = sizeof(checks) / sizeof(checks[0]);
        size_t s, i;

        tap_plan(sizeof(sections) / sizeof(sections[0]) + 1);

        for (s = 0; s < sizeof(sections) / sizeof(sections[0]); ++s) {
                unsigned int total = 0, bad = 0;

                for (i = 0; i < n; ++i) {
                        if (!same(checks[i].section, sections[s]))
                                continue;
                        ++total;
                        if (checks[i].got != checks[i].want) {
                                ++bad;
                                tap_diag("%s is 0x%llx, the table says 0x%llx",
                                         checks[i].what, checks[i].got, checks[i].want);
                        }
                }
                tap_ok(total > 0 && bad == 0, "ABI table %s: %u rows", sections[s], total);
        }

        tap_ok(check_item_walk(), "item chain through the header lands on the documented offsets");

        return tap_done();
}

#endif /* ABI_STATIC_ONLY */
