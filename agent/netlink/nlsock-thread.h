/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "agent/netlink/nlsock.h"

int nl_conn_thread_route(struct nl_conn **ret);
void nl_conn_thread_done(struct nl_conn *c);
