// SPDX-License-Identifier: MIT
/*
 * Description: net_ib's dma-buf probe and the registration of an
 * nccom-exported dma-buf with the NIC.  Registers a 1 MiB buffer with
 * /dev/nccom (MEM_REGISTER), exports it (MEM_EXPORT_DMABUF) and hands the
 * dma-buf to ccom_net_ib_dmabuf_check(): the probe's answer must be
 * "unsupported" on soft-RoCE (rxe devices; on other devices it is only
 * reported), the registration must take the matching path (by address, the
 * fallback, where unsupported; dma-buf where supported) and both the probe
 * and the path must be logged at INFO (CCOM_DEBUG=INFO, read back from
 * CCOM_DEBUG_FILE).  Needs an RDMA device and nccom.ko (in the VM:
 * selftests/libccom/ib/run-vm); skipped without them.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <linux/nccom.h>

#include "test_util.h"
#include "transport/net_ib.h"

#define DB_LEN (1u << 20)

static int first_rdma_device(char *name, size_t len)
{
	DIR *d = opendir("/sys/class/infiniband");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && !n++)
			snprintf(name, len, "%.*s", (int)len - 1, e->d_name);
	closedir(d);
	return n;
}

int main(void)
{
	char dev[256], via[64], why[512], log[128], buf[8192];
	struct nccom_mem_register mr;
	struct nccom_mem_export_dmabuf ex;
	int supported = -1, fd, err;
	bool rxe;
	size_t n;
	void *mem;
	FILE *f;

	if (!first_rdma_device(dev, sizeof(dev)))
		return t_skip("no RDMA device (/sys/class/infiniband is empty): run it in the VM with soft-RoCE, selftests/libccom/ib/run-vm");
	fd = open("/dev/nccom", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return t_skip("no /dev/nccom (%s): load nccom.ko (the VM runs of selftests/libccom/ib/run-vm do)",
			      strerror(errno));
	rxe = !strncmp(dev, "rxe", 3);
	snprintf(log, sizeof(log), "/tmp/ccom-nibdmabuf-%d.log", (int)getpid());
	t_log_to(log, "INFO", "NET");

	mem = mmap(NULL, DB_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_CHECK(mem != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(mem, 0x5a, DB_LEN);
	memset(&mr, 0, sizeof(mr));
	mr.size = sizeof(mr);
	mr.flags = NCCOM_MEM_READ | NCCOM_MEM_WRITE;
	mr.addr = (uintptr_t)mem;
	mr.length = DB_LEN;
	T_CHECK(ioctl(fd, NCCOM_IOC_MEM_REGISTER, &mr) == 0, "MEM_REGISTER: %s", strerror(errno));
	memset(&ex, 0, sizeof(ex));
	ex.size = sizeof(ex);
	ex.handle = mr.out_handle;
	T_CHECK(ioctl(fd, NCCOM_IOC_MEM_EXPORT_DMABUF, &ex) == 0, "MEM_EXPORT_DMABUF: %s",
		strerror(errno));

	why[0] = via[0] = '\0';
	err = ccom_net_ib_dmabuf_check(ex.out_fd, 0, mem, DB_LEN, &supported, via, sizeof(via),
				       why, sizeof(why));
	printf("%s: dma-buf registration %s (%s); the nccom dma-buf was registered by %s (rc %d%s%s)\n",
	       dev, supported ? "supported" : "unsupported", why, via, err,
	       err ? ": " : "", err ? ccomGetLastError(NULL) : "");
	T_CHECK(err == 0, "registering the nccom dma-buf failed: %s", ccomGetLastError(NULL));
	if (rxe)
		T_CHECK(supported == 0, "soft-RoCE (%s) must probe as unsupported, got %d", dev,
			supported);
	T_CHECK(!strcmp(via, supported ? "dma-buf" : "address (fallback)"),
		"the registration took the path '%s' with dma-buf %ssupported", via,
		supported ? "" : "un");

	f = fopen(log, "r");
	T_CHECK(f, "no INFO log at %s", log);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	unlink(log);
	snprintf(why, sizeof(why), "dma-buf registration on %s: %s", dev,
		 supported ? "supported" : "unsupported");
	T_CHECK(strstr(buf, why),
		"the probe's result is not in the INFO log:\n%s", buf);
	T_CHECK(strstr(buf, supported ? "by dma-buf (ibv_reg_dmabuf_mr)" :
			    "by address (ibv_reg_mr fallback: dma-buf unsupported)"),
		"the registration path is not in the INFO log:\n%s", buf);
	close(ex.out_fd);
	munmap(mem, DB_LEN);
	close(fd);
	printf("PASS: dma-buf probe and nccom dma-buf registration on %s\n", dev);
	return T_PASS;
}
