// SPDX-License-Identifier: MIT
/*
 * id.c - the leaf of bootstrap/: the 128-byte unique id seen from inside
 * (struct ccom_bs_id: magic, id version, flags, root address, secret), its magic,
 * and the identity (build hash, version, ABI) a rank announces to the root
 * and the root checks against its own.  It calls no other file of the
 * folder, so that both root.c and bootstrap.c can use it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/auth.h"
#include "bootstrap/bootstrap_private.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/params.h"
#include "util/socket.h"

/* ------------------------------------------------------------------ */
/* Identity announced to the root                                      */

uint64_t ccom_build_hash(void)
{
	if (ccom_param_is_set("CCOM_TEST_FAKE_BUILD_HASH"))
		return strtoull(ccom_param_str("CCOM_TEST_FAKE_BUILD_HASH"), NULL, 16);
	return CCOM_BUILD_HASH;
}

uint32_t ccom_version_code(void)
{
	if (ccom_param_is_set("CCOM_TEST_FAKE_VERSION"))
		return (uint32_t)ccom_param_int("CCOM_TEST_FAKE_VERSION");
	return CCOM_VERSION_CODE;
}

uint32_t ccom_abi_id(void)
{
	if (ccom_param_is_set("CCOM_TEST_FAKE_ABI"))
		return (uint32_t)ccom_param_int("CCOM_TEST_FAKE_ABI");
	return CCOM_ABI_COMPAT_ID;
}

/* ------------------------------------------------------------------ */
/* Unique id                                                           */

void ccom_bs_id_encode(const struct ccom_bs_id *h, ccomUniqueId *id)
{
	memset(id, 0, sizeof(*id));
	memcpy(id->internal, h, sizeof(*h));
}

int ccom_bs_id_decode(const ccomUniqueId *id, struct ccom_bs_id *h)
{
	memcpy(h, id->internal, sizeof(*h));
	if (h->id_version != CCOM_BS_ID_VERSION || !h->magic) {
		ccom_set_last_error("Bootstrap: the unique id is not one from ccomGetUniqueId (version %u, magic %016llx): pass the same 128 bytes to every rank",
				    h->id_version, (unsigned long long)h->magic);
		return -EINVAL;
	}
	return 0;
}

uint64_t ccom_bs_random_magic(void)
{
	uint64_t magic;

	do {
		ccom_random_bytes(&magic, sizeof(magic));
	} while (magic == CCOM_BS_FIXED_MAGIC || !magic);
	return magic;
}

uint64_t ccom_bootstrap_id_magic(const ccomUniqueId *id)
{
	struct ccom_bs_id h;

	memcpy(&h, id->internal, sizeof(h));
	return h.magic;
}

int ccom_bootstrap_id_from_addr(const char *addr_str, const char *what, ccomUniqueId *id)
{
	struct ccom_bs_id h;
	char why[160];
	int rc;

	memset(&h, 0, sizeof(h));
	rc = ccom_addr_parse(addr_str, &h.root, why, sizeof(why));
	if (rc) {
		ccom_set_last_error("Invalid %s [%s] (%s), please use format: <ipv4>:<port> | [<ipv6>]:<port> | <hostname>:<port>",
				    what, addr_str ? addr_str : "", why);
		return -EINVAL;
	}
	h.magic = CCOM_BS_FIXED_MAGIC;
	h.id_version = CCOM_BS_ID_VERSION;
	h.flags = CCOM_BS_ID_ROOT_AT_RANK0;
	/* Every rank builds this id from the address alone: there is no secret to share. */
	ccom_bs_public_key(h.secret);
	ccom_bs_id_encode(&h, id);
	return 0;
}
