/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libvirt's functions, loaded the first time the agent connects to libvirt
 * (libvirt.so.0, dlopen). A host that runs containers only ("libvirt":
 * false in the config) never maps libvirt and the thirty libraries it
 * brings (GnuTLS, OpenSSL, GLib, libssh, Kerberos). Each field has the
 * type of the libvirt function of the same name, from libvirt's header.
 */
#pragma once

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <stddef.h>

#define LIBVIRT_API_FUNCTIONS(X)                                                                   \
	X(virConnectClose)                                                                         \
	X(virConnectDomainEventDeregisterAny)                                                      \
	X(virConnectDomainEventRegisterAny)                                                        \
	X(virConnectIsAlive)                                                                       \
	X(virConnectListAllDomains)                                                                \
	X(virConnectOpen)                                                                          \
	X(virConnectRef)                                                                           \
	X(virConnectRegisterCloseCallback)                                                         \
	X(virConnectSetKeepAlive)                                                                  \
	X(virConnectUnregisterCloseCallback)                                                       \
	X(virDomainAttachDeviceFlags)                                                              \
	X(virDomainDetachDeviceFlags)                                                              \
	X(virDomainFree)                                                                           \
	X(virDomainGetConnect)                                                                     \
	X(virDomainGetID)                                                                          \
	X(virDomainGetName)                                                                        \
	X(virDomainGetUUIDString)                                                                  \
	X(virDomainGetXMLDesc)                                                                     \
	X(virDomainIsActive)                                                                       \
	X(virDomainIsPersistent)                                                                   \
	X(virDomainLookupByName)                                                                   \
	X(virDomainLookupByUUIDString)                                                             \
	X(virDomainRef)                                                                            \
	X(virEventAddTimeout)                                                                      \
	X(virEventRegisterDefaultImpl)                                                             \
	X(virEventRemoveTimeout)                                                                   \
	X(virEventRunDefaultImpl)                                                                  \
	X(virEventUpdateTimeout)                                                                   \
	X(virGetLastError)                                                                         \
	X(virSetErrorFunc)

#define LIBVIRT_API_FIELD(name) __typeof__(name) *name;

struct libvirt_api {
	LIBVIRT_API_FUNCTIONS(LIBVIRT_API_FIELD)
};

int libvirt_api_load(const struct libvirt_api **ret, char *err, size_t err_size);
const char *libvirt_api_load_error(void);
