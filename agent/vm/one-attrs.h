/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * OpenNebula's NIC attributes in the agent's terms, the one place they are
 * read: a flag (SPOOFCHK, TRUST) is on for YES or ON and off for NO or OFF,
 * in any case, as oned's templates and Sunstone write them; a rate
 * (OUTBOUND_AVG_BW, and libvirt's <bandwidth><outbound average>, which oned
 * copies it into) is kilobytes a second, a VF's max_tx_rate Mbit/s rounded
 * up. The hooks hand the attributes over as oned keeps them (a claim's or an
 * update's "opennebula", a deployment's query and <bandwidth>);
 * tests/one/rates.txt and flags.txt hold these functions to oned's values.
 */
#pragma once

#include <stdint.h>

/* The largest rate in kilobytes a second: its Mbit/s still fit a VF's 32-bit max_tx_rate. */
#define ONE_RATE_KBYTES_MAX 536870911875LL

/* 1 for YES or ON, 0 for NO or OFF (any case); -EINVAL for any other word. */
int one_flag(const char *word, int *ret);

/* @kbytes (0 to ONE_RATE_KBYTES_MAX) in Mbit/s, rounded up; -ERANGE outside. */
int one_rate(long long kbytes, uint32_t *ret_mbits);
