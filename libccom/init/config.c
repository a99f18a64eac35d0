// SPDX-License-Identifier: MIT
/*
 * config.c - validation of a caller's ccomConfig_t into the effective
 * config of an init: the size and magic rules that let a caller built
 * against an older (smaller) or newer (larger) ccom.h work, every field's
 * range, and the defaults that come from the environment.
 *
 * Size rules: the library reads config->size bytes.  A field that ends
 * past them keeps its default (an older caller does not have it); bytes
 * past sizeof(ccomConfig_t) must be zero (a newer caller's fields this
 * library would otherwise ignore in silence).  Reserved fields the caller
 * has must be zero.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "init/init.h"
#include "transport/transport.h"
#include "util/err.h"
#include "util/log.h"
#include "util/params.h"

#define CONFIG_SIZE_MAX 4096

/* The caller's struct holds all of the field at @off, @len bytes long. */
static bool has_field(size_t size, size_t off, size_t len)
{
	return size >= off + len;
}

#define HAS(size, field) has_field(size, offsetof(ccomConfig_t, field), \
				   sizeof(((ccomConfig_t *)0)->field))

static int check_tail(const ccomConfig_t *config)
{
	const unsigned char *p = (const unsigned char *)config;
	size_t i;

	for (i = sizeof(ccomConfig_t); i < config->size; i++) {
		if (p[i]) {
			ccom_set_last_error("Invalid config: size %zu with a non-zero byte at offset %zu, past the %zu bytes of ccomConfig_t this library knows; the caller was built against a newer ccom.h: use a libccom at least that new, or leave the new fields unset",
					    config->size, i, sizeof(ccomConfig_t));
			return -EINVAL;
		}
	}
	return 0;
}

static int check_reserved(const ccomConfig_t *config, const ccomConfig_t *out)
{
	size_t i;

	for (i = 0; i < sizeof(out->reserved) / sizeof(int); i++) {
		if (has_field(config->size, offsetof(ccomConfig_t, reserved) + i * sizeof(int),
			      sizeof(int)) && out->reserved[i]) {
			ccom_set_last_error("Invalid config: reserved[%zu] is %d, must be 0", i,
					    out->reserved[i]);
			return -EINVAL;
		}
	}
	if (HAS(config->size, reserved2) && out->reserved2) {
		ccom_set_last_error("Invalid config: reserved2 is %d, must be 0", out->reserved2);
		return -EINVAL;
	}
	return 0;
}

/* Copy the caller's @config (size and magic checked) over the defaults in @out. */
static int config_copy(const ccomConfig_t *config, ccomConfig_t *out)
{
	size_t nres;

	if (config->magic != CCOM_CONFIG_MAGIC) {
		ccom_set_last_error("Invalid config: magic %#x is not CCOM_CONFIG_MAGIC; initialise ccomConfig_t with CCOM_CONFIG_INITIALIZER",
				    config->magic);
		return -EINVAL;
	}
	if (config->size < offsetof(ccomConfig_t, reserved) || config->size > CONFIG_SIZE_MAX) {
		ccom_set_last_error("Invalid config: size %zu is not sizeof(ccomConfig_t) (%zu); initialise it with CCOM_CONFIG_INITIALIZER",
				    config->size, sizeof(ccomConfig_t));
		return -EINVAL;
	}
	if (check_tail(config))
		return -EINVAL;
	/* Field by field: a size that cuts a field leaves that field's default. */
	out->version = config->version;	/* the caller's, as it was compiled */
	out->blocking = config->blocking;
	out->device = config->device;
	out->timeoutSec = config->timeoutSec;
	nres = (config->size - offsetof(ccomConfig_t, reserved)) / sizeof(int);
	if (nres > sizeof(out->reserved) / sizeof(int))
		nres = sizeof(out->reserved) / sizeof(int);
	memcpy(out->reserved, config->reserved, nres * sizeof(int));
	if (HAS(config->size, commName))
		out->commName = config->commName;
	if (HAS(config->size, netName))
		out->netName = config->netName;
	if (HAS(config->size, trafficClass))
		out->trafficClass = config->trafficClass;
	if (HAS(config->size, reserved2))
		out->reserved2 = config->reserved2;
	return check_reserved(config, out);
}

static int check_comm_name(const ccomConfig_t *out)
{
	const unsigned char *s = (const unsigned char *)out->commName;
	size_t n;

	if (!s)
		return 0;
	n = strnlen((const char *)s, CCOM_COMM_NAME_MAX);
	if (n >= CCOM_COMM_NAME_MAX) {
		ccom_set_last_error("Invalid config: commName \"%.16s...\" is longer than %d bytes; use a shorter name",
				    (const char *)s, CCOM_COMM_NAME_MAX - 1);
		return -EINVAL;
	}
	for (; *s; s++) {
		if (*s < 0x20 || *s == 0x7f) {
			ccom_set_last_error("Invalid config: commName has the control character %#x at byte %zu; a name is printed in logs and metric labels, use printable characters",
					    *s, (size_t)(s - (const unsigned char *)out->commName));
			return -EINVAL;
		}
	}
	return 0;
}

static int check_net_name(ccomConfig_t *out)
{
	const char *canon;

	if (!out->netName)
		return 0;
	if (!out->netName[0]) {
		out->netName = NULL;	/* "" is unset, as an empty CCOM_NET is */
		return 0;
	}
	canon = ccom_transport_net_lookup(out->netName);
	if (!canon) {
		ccom_set_last_error("Invalid config: netName \"%.32s\" is not a network transport; use one of: %s (or NULL for CCOM_NET)",
				    out->netName, ccom_transport_net_names());
		return -EINVAL;
	}
	out->netName = canon;	/* static: outlives the caller's string */
	return 0;
}

static int check_traffic_class(const ccomConfig_t *out)
{
	if (out->trafficClass != CCOM_CONFIG_UNDEF_INT &&
	    (out->trafficClass < 0 || out->trafficClass > 255)) {
		ccom_set_last_error("Invalid config: trafficClass %d is out of range [0, 255]; it is the IP TOS / traffic class byte (leave it CCOM_CONFIG_UNDEF_INT for the default)",
				    out->trafficClass);
		return -EINVAL;
	}
	return 0;
}

static int check_device(ccomConfig_t *out)
{
	if (out->device == CCOM_CONFIG_UNDEF_INT && ccom_param_is_set("CCOM_DEVICE"))
		out->device = (int)ccom_param_int("CCOM_DEVICE");
	if (out->device == CCOM_CONFIG_UNDEF_INT && ccom_param_is_set("CCOM_TEST_FORCE_DEVICE"))
		out->device = (int)ccom_param_int("CCOM_TEST_FORCE_DEVICE");
	if (out->device != CCOM_CONFIG_UNDEF_INT && out->device < -1) {
		ccom_set_last_error("Invalid config: device %d; use a device index >= 0, -1 for none, or leave it unset",
				    out->device);
		return -EINVAL;
	}
	/* With the driver present, an explicit device must exist (checked before anything is made). */
	if (out->device != CCOM_CONFIG_UNDEF_INT && out->device >= 0) {
		int ndev = ccom_device_count();

		if (ndev > 0 && out->device >= ndev) {
			ccom_set_last_error("Invalid config: device %d, but this host has %d nccom device(s) (0-%d)",
					    out->device, ndev, ndev - 1);
			return -EINVAL;
		}
	}
	return 0;
}

static int check_timeout(ccomConfig_t *out)
{
	if (out->timeoutSec == CCOM_CONFIG_UNDEF_INT) {
		int64_t t = ccom_param_int("CCOM_BOOTSTRAP_TIMEOUT");

		if (t < 1 || t > 86400 * 7) {
			ccom_warn("CCOM_BOOTSTRAP_TIMEOUT=%lld is out of range [1, 604800]; using 300",
				  (long long)t);
			t = 300;
		}
		out->timeoutSec = (int)t;
	} else if (out->timeoutSec < 1 || out->timeoutSec > 86400 * 7) {
		ccom_set_last_error("Invalid config: timeoutSec %d is out of range [1, 604800]",
				    out->timeoutSec);
		return -EINVAL;
	}
	return 0;
}

int ccom_config_validate(const ccomConfig_t *config, ccomConfig_t *out)
{
	ccomConfig_t def = CCOM_CONFIG_INITIALIZER;
	int rc;

	*out = def;
	if (config) {
		rc = config_copy(config, out);
		if (rc)
			return rc;
	}
	if (out->blocking != 0 && out->blocking != 1) {
		ccom_set_last_error("Invalid config: blocking is %d, must be 0 or 1", out->blocking);
		return -EINVAL;
	}
	rc = check_device(out);
	if (!rc)
		rc = check_timeout(out);
	if (!rc)
		rc = check_comm_name(out);
	if (!rc)
		rc = check_net_name(out);
	if (!rc)
		rc = check_traffic_class(out);
	return rc;
}
