/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* sd_notify(3) "READY=1" without libsystemd; nothing when $NOTIFY_SOCKET is unset */
void sd_notify_ready(void);
