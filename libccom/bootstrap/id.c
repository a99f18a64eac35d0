// SPDX-License-Identifier: MIT
/*
 * id.c - the leaf of bootstrap/: the 128-byte unique id seen from inside
 * (struct ccom_bs_id: magic, id version, flags, root address, secret), its magic,
 * and the identity (build hash, version, ABI) a rank announces to the root
 * and the root checks against its own; and the job secret
 * (CCOM_COMM_SECRET, CCOM_COMM_SECRET_FILE) mixed into every id's key.  Of
 * the folder it calls auth.c and mac.c only, so that both root.c and
 * bootstrap.c can use it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bootstrap/auth.h"
#include "bootstrap/bootstrap_private.h"
#include "bootstrap/mac.h"
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
	struct ccom_bs_id c = *h;

	/* The in-memory flag says nothing to another process. */
	c.flags &= ~CCOM_BS_ID_KEYED;
	memset(id, 0, sizeof(*id));
	memcpy(id->internal, &c, sizeof(c));	/* @id may be unaligned */
	explicit_bzero(&c, sizeof(c));
}

/* The contents of CCOM_COMM_SECRET_FILE @path into @buf (NUL-terminated); its length or -errno. */
static ssize_t secret_file_read(const char *path, char *buf, size_t cap)
{
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0) {
		ccom_set_last_error("CCOM_COMM_SECRET_FILE=%s cannot be opened (%s): give the path of a file that holds the job's secret, readable by this user only",
				    path, strerror(errno));
		return -EINVAL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		ccom_set_last_error("CCOM_COMM_SECRET_FILE=%s is not a regular file owned by this user (uid %u) and readable by it only (mode %04o, owner %u): chmod 600 it",
				    path, (unsigned)geteuid(), (unsigned)(st.st_mode & 07777),
				    (unsigned)st.st_uid);
		close(fd);
		return -EINVAL;
	}
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0 || (size_t)n >= cap - 1) {
		ccom_set_last_error("CCOM_COMM_SECRET_FILE=%s: %s: the secret must be 1 to %zu bytes",
				    path, n < 0 ? strerror(errno) : "too long", cap - 2);
		explicit_bzero(buf, cap);
		return -EINVAL;
	}
	/* "echo secret > file" and CCOM_COMM_SECRET=secret give the same key. */
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	buf[n] = '\0';
	return n;
}

int ccom_bs_comm_secret(uint8_t out[CCOM_BS_KEY_BYTES])
{
	static const char label[] = "ccom job secret v1";
	const char *env = ccom_param_str("CCOM_COMM_SECRET");
	const char *file = ccom_param_str("CCOM_COMM_SECRET_FILE");
	char buf[CCOM_BS_SECRET_MAX + 2];
	struct ccom_sha256 sh;
	ssize_t n;

	if (env && file) {
		ccom_set_last_error("Both CCOM_COMM_SECRET and CCOM_COMM_SECRET_FILE are set: set one of them, identically on every rank");
		return -EINVAL;
	}
	if (!env && !file)
		return 0;
	if (file) {
		n = secret_file_read(file, buf, sizeof(buf));
		if (n < 0)
			return (int)n;
	} else {
		n = (ssize_t)strlen(env);
		if ((size_t)n > CCOM_BS_SECRET_MAX) {
			ccom_set_last_error("CCOM_COMM_SECRET is %zd bytes long: the secret must be 1 to %d bytes",
					    n, CCOM_BS_SECRET_MAX);
			return -EINVAL;
		}
		memcpy(buf, env, (size_t)n);
	}
	if (n < 1) {
		ccom_set_last_error("%s is empty: the job's secret must be 1 to %d bytes (or unset both CCOM_COMM_SECRET and CCOM_COMM_SECRET_FILE)",
				    file ? "CCOM_COMM_SECRET_FILE" : "CCOM_COMM_SECRET", CCOM_BS_SECRET_MAX);
		explicit_bzero(buf, sizeof(buf));
		return -EINVAL;
	}
	ccom_sha256_init(&sh);
	ccom_sha256_update(&sh, label, sizeof(label) - 1);
	ccom_sha256_update(&sh, buf, (size_t)n);
	ccom_sha256_final(&sh, out);
	explicit_bzero(buf, sizeof(buf));
	return 1;
}

int ccom_bs_id_mix_secret(uint8_t key[CCOM_BS_KEY_BYTES])
{
	static const char label[] = "ccom id key with job secret";
	uint8_t js[CCOM_BS_KEY_BYTES];
	const void *parts[2] = { label, key };
	size_t lens[2] = { sizeof(label) - 1, CCOM_BS_KEY_BYTES };
	int rc = ccom_bs_comm_secret(js);

	if (rc <= 0)
		return rc;
	/* The id alone (as torch's TCPStore holds it) no longer authenticates. */
	ccom_hmac_sha256_v(js, sizeof(js), 2, parts, lens, key);
	explicit_bzero(js, sizeof(js));
	return 1;
}

int ccom_bs_id_decode(const ccomUniqueId *id, struct ccom_bs_id *h)
{
	int rc;

	memcpy(h, id->internal, sizeof(*h));
	if (h->id_version != CCOM_BS_ID_VERSION || !h->magic) {
		ccom_set_last_error("Bootstrap: the unique id is not one from ccomGetUniqueId (version %u, magic %016llx): pass the same 128 bytes to every rank",
				    h->id_version, (unsigned long long)h->magic);
		return -EINVAL;
	}
	h->flags &= ~CCOM_BS_ID_KEYED;
	rc = ccom_bs_id_mix_secret(h->secret);
	if (rc < 0) {
		explicit_bzero(h, sizeof(*h));
		return rc;
	}
	if (rc)
		h->flags |= CCOM_BS_ID_KEYED;
	return 0;
}

int ccom_bs_random_magic(uint64_t *magic)
{
	do {
		if (ccom_random_bytes(magic, sizeof(*magic))) {
			char why[200];

			snprintf(why, sizeof(why), "%s", ccomGetLastError(NULL));
			ccom_set_last_error("Bootstrap: cannot make the magic of a unique id: %s", why);
			return -EIO;
		}
	} while (*magic == CCOM_BS_FIXED_MAGIC || !*magic);
	return 0;
}

uint64_t ccom_bootstrap_id_magic(const ccomUniqueId *id)
{
	struct ccom_bs_id h;

	memcpy(&h, id->internal, sizeof(h));
	return h.magic;
}

int ccom_bootstrap_id_grow_info(const ccomUniqueId *id, int *base, uint64_t *hash)
{
	struct ccom_bs_id h;

	memcpy(&h, id->internal, sizeof(h));
	if (h.id_version != CCOM_BS_ID_VERSION || !h.magic || !(h.flags & CCOM_BS_ID_GROW) ||
	    h.grow_base < 1)
		return -1;
	*base = h.grow_base;
	*hash = h.grow_hash;
	explicit_bzero(&h, sizeof(h));
	return 0;
}

int ccom_bootstrap_id_from_addr(const char *addr_str, const char *what, ccomUniqueId *id)
{
	static const char label[] = "ccom id from an address v1";
	uint8_t pub[CCOM_BS_KEY_BYTES], m[CCOM_SHA256_BYTES];
	const void *parts[2];
	size_t lens[2];
	struct ccom_bs_id h;
	char why[160], canon[80];
	int rc;

	memset(&h, 0, sizeof(h));
	rc = ccom_addr_parse(addr_str, &h.root, why, sizeof(why));
	if (rc) {
		ccom_set_last_error("Invalid %s [%s] (%s), please use format: <ipv4>:<port> | [<ipv6>]:<port> | <hostname>:<port>",
				    what, addr_str ? addr_str : "", why);
		return -EINVAL;
	}
	h.id_version = CCOM_BS_ID_VERSION;
	h.flags = CCOM_BS_ID_ROOT_AT_RANK0;
	/*
	 * Every rank builds this id from the address alone: the key is public
	 * (CCOM_COMM_SECRET, mixed in at decode, makes it private) but tied to
	 * the root's address, so that two jobs on one host differ in key and
	 * magic (and so in their host leaders' sockets).
	 */
	ccom_addr_str(&h.root, canon, sizeof(canon));
	ccom_bs_public_key(pub);
	parts[0] = label;
	lens[0] = sizeof(label) - 1;
	parts[1] = canon;
	lens[1] = strlen(canon);
	ccom_hmac_sha256_v(pub, sizeof(pub), 2, parts, lens, h.secret);
	parts[0] = "magic";
	lens[0] = 5;
	ccom_hmac_sha256_v(h.secret, sizeof(h.secret), 1, parts, lens, m);
	memcpy(&h.magic, m, sizeof(h.magic));
	if (!h.magic || h.magic == CCOM_BS_FIXED_MAGIC)
		h.magic = CCOM_BS_FIXED_MAGIC + 1;
	ccom_bs_id_encode(&h, id);
	return 0;
}
