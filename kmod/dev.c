// SPDX-License-Identifier: GPL-2.0
/*
 * nccom devices: the table of virtual devices that queues are created on
 * and engines run for, and the platform device that dma-buf attachments
 * map through. A leaf like object.c: it calls no other nccom file.
 *
 * Copyright (C) 2026 The ccom authors.
 */
#include <linux/dma-mapping.h>
#include <linux/nodemask.h>
#include <linux/platform_device.h>
#include <linux/slab.h>

#include "nccom_private.h"

/* The ndevs and engines module parameters (main.c). */
unsigned int nccom_ndevs = 2;
unsigned int nccom_nengines = 1;

struct nccom_dev *nccom_devs;
struct device *nccom_dma_dev;
static struct platform_device *nccom_pdev;

/**
 * nccom_devs_init() - allocate the virtual devices from the module parameters
 *
 * Return: 0, -EINVAL if ndevs or engines is out of range, or -ENOMEM.
 */
int nccom_devs_init(void)
{
	unsigned int i;

	if (nccom_ndevs < 1 || nccom_ndevs > NCCOM_MAX_DEVS ||
	    nccom_nengines < 1 || nccom_nengines > NCCOM_MAX_ENGINES) {
		pr_err("nccom: ndevs must be 1-%d and engines 1-%d\n",
		       NCCOM_MAX_DEVS, NCCOM_MAX_ENGINES);
		return -EINVAL;
	}
	nccom_devs = kcalloc(nccom_ndevs, sizeof(*nccom_devs), GFP_KERNEL);
	if (!nccom_devs)
		return -ENOMEM;
	for (i = 0; i < nccom_ndevs; i++) {
		struct nccom_dev *ndev = &nccom_devs[i];

		ndev->index = i;
		ndev->numa_node = num_online_nodes() > 1 ?
				  (int)(i % num_online_nodes()) : NUMA_NO_NODE;
		ndev->nengines = nccom_nengines;
	}
	return 0;
}

/**
 * nccom_devs_fini() - free the virtual devices (their engines are stopped)
 */
void nccom_devs_fini(void)
{
	kfree(nccom_devs);
}

/**
 * nccom_dma_dev_init() - register the device for dma_buf attachments
 *
 * The device gets a 64-bit DMA mask so that mapping attachments works.
 * Return: 0 or a negative errno from the platform device or DMA mask.
 */
int nccom_dma_dev_init(void)
{
	int ret;

	nccom_pdev = platform_device_register_simple("nccom", -1, NULL, 0);
	if (IS_ERR(nccom_pdev))
		return PTR_ERR(nccom_pdev);
	ret = dma_coerce_mask_and_coherent(&nccom_pdev->dev, DMA_BIT_MASK(64));
	if (ret) {
		platform_device_unregister(nccom_pdev);
		return ret;
	}
	nccom_dma_dev = &nccom_pdev->dev;
	return 0;
}

/**
 * nccom_dma_dev_fini() - unregister the device of nccom_dma_dev_init()
 */
void nccom_dma_dev_fini(void)
{
	platform_device_unregister(nccom_pdev);
}
