// SPDX-License-Identifier: MIT
/*
 * Description: the shared library's ABI surface.  dlopen()s the
 * libccom.so.1 built next to this test (BUILD/lib, found from
 * /proc/self/exe), checks its SONAME-versioned public entry points resolve
 * (ccomGetVersionInfo with the CCOM_1.0 symbol version, ccomCommRevoke
 * with CCOM_1.1, ccomCommRegister with CCOM_1.3), that the version
 * handshake reports the compile-time version and ABI id (also truncated
 * for an older, smaller struct), and that internal symbols (ccom_*) are
 * not exported.  Skipped when the shared library is not there.
 */
#include <dlfcn.h>
#include <limits.h>

#include "test_util.h"

int main(void)
{
	char exe[PATH_MAX], so[PATH_MAX + 32];
	ccomResult_t (*info_fn)(struct ccomVersionInfo *);
	ccomResult_t (*ver_fn)(int *);
	struct ccomVersionInfo vi;
	void *h;
	int v;

	T_CHECK(!t_build_file("lib/libccom.so.1", so, sizeof(so)), "readlink /proc/self/exe");
	if (access(so, R_OK))
		return t_skip("%s not built", so);
	h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (!h && t_sanitizer())
		return t_skip("cannot dlopen the sanitized library here: %s", dlerror());
	T_CHECK(h, "dlopen %s: %s", so, dlerror());
	info_fn = (ccomResult_t (*)(struct ccomVersionInfo *))dlvsym(h, "ccomGetVersionInfo",
								    "CCOM_1.0");
	ver_fn = (ccomResult_t (*)(int *))dlvsym(h, "ccomGetVersion", "CCOM_1.0");
	T_CHECK(info_fn && ver_fn, "public symbols not found with version CCOM_1.0");
	/* Additions live in their own node, never in CCOM_1.0. */
	T_CHECK(dlvsym(h, "ccomCommRevoke", "CCOM_1.1") && !dlvsym(h, "ccomCommRevoke", "CCOM_1.0"),
		"ccomCommRevoke is not exported with version CCOM_1.1 (only)");
	T_CHECK(dlvsym(h, "ccomCommShrink", "CCOM_1.1") && !dlvsym(h, "ccomCommShrink", "CCOM_1.0") &&
		dlvsym(h, "ccomCommGetFailedRanks", "CCOM_1.1"),
		"ccomCommShrink / ccomCommGetFailedRanks are not exported with version CCOM_1.1");
	T_CHECK(dlvsym(h, "ccomCommRegister", "CCOM_1.3") && dlvsym(h, "ccomCommDeregister", "CCOM_1.3") &&
		!dlvsym(h, "ccomCommRegister", "CCOM_1.2"),
		"ccomCommRegister / ccomCommDeregister are not exported with version CCOM_1.3 (only)");
	T_CHECK(ver_fn(&v) == ccomSuccess && v == CCOM_VERSION_CODE, "version %d", v);
	memset(&vi, 0, sizeof(vi));
	vi.size = sizeof(vi);
	T_CHECK(info_fn(&vi) == ccomSuccess, "ccomGetVersionInfo");
	T_CHECK(vi.major == CCOM_MAJOR && vi.minor == CCOM_MINOR && vi.patch == CCOM_PATCH &&
			vi.abiCompatId == CCOM_ABI_COMPAT_ID && vi.buildHash != 0 &&
			vi.size == sizeof(vi),
		"version info %u.%u.%u abi %u", vi.major, vi.minor, vi.patch, vi.abiCompatId);
	snprintf(exe, sizeof(exe), "%d.%d.%d", CCOM_MAJOR, CCOM_MINOR, CCOM_PATCH);
	T_CHECK(!strcmp(vi.versionString, exe), "version string \"%s\"", vi.versionString);
	/* An older caller with a 12-byte struct gets exactly 12 bytes. */
	memset(&vi, 0xab, sizeof(vi));
	vi.size = 12;
	T_CHECK(info_fn(&vi) == ccomSuccess && vi.minor == CCOM_MINOR &&
			vi.abiCompatId == 0xabababab,
		"truncated copy wrote past the caller's size");
	vi.size = 0;
	T_CHECK(info_fn(&vi) == ccomInvalidArgument, "size 0 accepted");
	T_CHECK(!dlsym(h, "ccom_bootstrap_init") && !dlsym(h, "ccom_param_int") &&
			!dlsym(h, "ccom_result_from_errno"),
		"internal symbols are exported");
	dlclose(h);
	printf("%s: CCOM_1.0 symbols, version %d, ABI %d, internals hidden\n", so, v,
	       CCOM_ABI_COMPAT_ID);
	return T_PASS;
}
