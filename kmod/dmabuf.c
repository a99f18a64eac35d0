// SPDX-License-Identifier: GPL-2.0
/*
 * nccom dma-buf: export of a registration as a dma-buf (the grant passed to
 * peers over Unix sockets) and import of dma-bufs. An nccom dma-buf is
 * imported by taking a reference on its region, so the importer's engine
 * copies straight from the exporter's pinned pages. A foreign dma-buf is
 * attached dynamically, pinned and mapped (the RDMA umem_dmabuf sequence)
 * and vmapped for CPU access by the engine.
 *
 * Copyright (C) 2026 The ccom authors.
 */
#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "nccom_private.h"
#include "compat.h"

static struct sg_table *nccom_dmabuf_map(struct dma_buf_attachment *attach,
					 enum dma_data_direction dir)
{
	struct nccom_export *exp = attach->dmabuf->priv;
	struct nccom_region *region = exp->region;
	struct sg_table *sgt;
	int ret;

	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);
	ret = sg_alloc_table_from_pages(sgt, region->pages, region->npages, 0,
					region->length, GFP_KERNEL);
	if (ret)
		goto err_free_sgt;
	ret = dma_map_sgtable(attach->dev, sgt, dir, 0);
	if (ret)
		goto err_free_table;
	return sgt;

err_free_table:
	sg_free_table(sgt);
err_free_sgt:
	kfree(sgt);
	return ERR_PTR(ret);
}

static void nccom_dmabuf_unmap(struct dma_buf_attachment *attach,
			       struct sg_table *sgt,
			       enum dma_data_direction dir)
{
	dma_unmap_sgtable(attach->dev, sgt, dir, 0);
	sg_free_table(sgt);
	kfree(sgt);
}

static void nccom_dmabuf_release(struct dma_buf *dmabuf)
{
	struct nccom_export *exp = dmabuf->priv;
	struct nccom_region *region = exp->region;

	down_write(&region->lock);
	list_del(&exp->node);
	up_write(&region->lock);
	kfree(exp);
	nccom_region_put(region);
	atomic64_dec(&nccom_stats.objects);
	module_put(THIS_MODULE);
}

static int nccom_dmabuf_mmap(struct dma_buf *dmabuf,
			     struct vm_area_struct *vma)
{
	return nccom_export_mmap(dmabuf->priv, vma);
}

static const struct dma_buf_ops nccom_dmabuf_ops = {
	.map_dma_buf = nccom_dmabuf_map,
	.unmap_dma_buf = nccom_dmabuf_unmap,
	.release = nccom_dmabuf_release,
	.mmap = nccom_dmabuf_mmap,
};

static struct nccom_mem *nccom_mem_lookup(struct nccom_ctx *ctx, u32 id)
{
	struct nccom_object *obj = nccom_obj_get(ctx, id, NCCOM_OBJ_MEM);

	return IS_ERR(obj) ? ERR_CAST(obj) : to_nccom_mem(obj);
}

int nccom_ioctl_mem_export_dmabuf(struct nccom_ucmd *ucmd)
{
	struct nccom_mem_export_dmabuf *cmd = ucmd->cmd;
	DEFINE_DMA_BUF_EXPORT_INFO(exp_info);
	struct nccom_export *exp;
	struct dma_buf *dmabuf;
	struct nccom_mem *mem;
	int fd, ret;

	if (cmd->flags & ~(u32)NCCOM_MEM_EXPORT_MAP_WRITE)
		return -EINVAL;
	mem = nccom_mem_lookup(ucmd->ctx, cmd->handle);
	if (IS_ERR(mem))
		return PTR_ERR(mem);
	ret = -EINVAL;
	if (!mem->registration) {
		nccom_warn_rl("MEM_EXPORT_DMABUF: handle %u is an import, export a registration\n",
			      cmd->handle);
		goto err_put_mem;
	}
	if ((cmd->flags & NCCOM_MEM_EXPORT_MAP_WRITE) &&
	    !(mem->access & NCCOM_MEM_WRITE)) {
		nccom_warn_rl("MEM_EXPORT_DMABUF: MAP_WRITE needs a writable registration (%u)\n",
			      cmd->handle);
		goto err_put_mem;
	}
	ret = -ENOMEM;
	exp = nccom_should_fail() ? NULL : kzalloc(sizeof(*exp), GFP_KERNEL_ACCOUNT);
	if (!exp)
		goto err_put_mem;
	exp->region = mem->region;
	exp->map_write = cmd->flags & NCCOM_MEM_EXPORT_MAP_WRITE;
	exp_info.ops = &nccom_dmabuf_ops;
	exp_info.size = mem->region->length;
	exp_info.flags = O_RDWR | O_CLOEXEC;
	exp_info.priv = exp;
	__module_get(THIS_MODULE);
	dmabuf = nccom_should_fail() ? ERR_PTR(-ENOMEM) : dma_buf_export(&exp_info);
	if (IS_ERR(dmabuf)) {
		ret = PTR_ERR(dmabuf);
		module_put(THIS_MODULE);
		kfree(exp);
		goto err_put_mem;
	}
	exp->dmabuf = dmabuf;
	nccom_region_get(mem->region);
	down_write(&mem->region->lock);
	list_add(&exp->node, &mem->region->exports);
	up_write(&mem->region->lock);
	atomic64_inc(&nccom_stats.objects);
	fd = dma_buf_fd(dmabuf, O_CLOEXEC);
	if (fd < 0) {
		dma_buf_put(dmabuf);
		ret = fd;
		goto err_put_mem;
	}
	cmd->out_fd = fd;
	nccom_obj_put(&mem->obj);
	/* The fd is installed: on a copy-out failure the user still owns it. */
	return nccom_ucmd_respond(ucmd, sizeof(*cmd));

err_put_mem:
	nccom_obj_put(&mem->obj);
	return ret;
}

static void nccom_move_notify(struct dma_buf_attachment *attach)
{
	struct nccom_region *region = attach->importer_priv;

	/* Never called for a pinned attachment; be safe if it is. */
	down_write(&region->lock);
	region->dead = true;
	up_write(&region->lock);
}

static const struct dma_buf_attach_ops nccom_importer_ops = {
	.allow_peer2peer = false,
	.move_notify = nccom_move_notify,
};

static int nccom_dmabuf_vmap(struct nccom_region *region)
{
	return nccom_compat_dma_buf_vmap(region->dmabuf, &region->map);
}

static void nccom_dmabuf_vunmap(struct nccom_region *region)
{
	nccom_compat_dma_buf_vunmap(region->dmabuf, &region->map);
}

/* attach (dynamic) -> pin -> map under the reservation lock -> vmap */
static int nccom_region_attach(struct nccom_region *region)
{
	struct sg_table *sgt;
	int ret;

	region->attach = dma_buf_dynamic_attach(region->dmabuf, nccom_dma_dev,
						&nccom_importer_ops, region);
	if (IS_ERR(region->attach))
		return PTR_ERR(region->attach);
	dma_resv_lock(region->dmabuf->resv, NULL);
	ret = dma_buf_pin(region->attach);
	if (ret)
		goto err_unlock;
	sgt = dma_buf_map_attachment(region->attach, DMA_BIDIRECTIONAL);
	if (IS_ERR(sgt)) {
		ret = PTR_ERR(sgt);
		goto err_unpin;
	}
	region->sgt = sgt;
	dma_resv_unlock(region->dmabuf->resv);
	ret = nccom_dmabuf_vmap(region);
	if (ret || iosys_map_is_null(&region->map) || region->map.is_iomem) {
		if (!ret)
			nccom_dmabuf_vunmap(region);
		nccom_warn_rl("MEM_IMPORT_DMABUF: exporter cannot vmap the dma-buf\n");
		ret = -EOPNOTSUPP;
		dma_resv_lock(region->dmabuf->resv, NULL);
		goto err_unmap;
	}
	return 0;

err_unmap:
	dma_buf_unmap_attachment(region->attach, region->sgt, DMA_BIDIRECTIONAL);
err_unpin:
	dma_buf_unpin(region->attach);
err_unlock:
	dma_resv_unlock(region->dmabuf->resv);
	dma_buf_detach(region->dmabuf, region->attach);
	return ret;
}

/* Called by the region release for NCCOM_REGION_VMAP. */
void nccom_region_free_dmabuf(struct nccom_region *region)
{
	nccom_dmabuf_vunmap(region);
	dma_resv_lock(region->dmabuf->resv, NULL);
	dma_buf_unmap_attachment(region->attach, region->sgt, DMA_BIDIRECTIONAL);
	dma_buf_unpin(region->attach);
	dma_resv_unlock(region->dmabuf->resv);
	dma_buf_detach(region->dmabuf, region->attach);
	dma_buf_put(region->dmabuf);
}

static struct nccom_region *nccom_region_import(struct dma_buf *dmabuf,
						u32 access)
{
	struct nccom_region *region;
	int ret;

	if (dmabuf->ops == &nccom_dmabuf_ops) {
		region = ((struct nccom_export *)dmabuf->priv)->region;
		if ((region->access & access) != access)
			return ERR_PTR(-EINVAL);
		return nccom_region_get(region);
	}
	region = kzalloc(sizeof(*region), GFP_KERNEL_ACCOUNT);
	if (!region)
		return ERR_PTR(-ENOMEM);
	kref_init(&region->kref);
	init_rwsem(&region->lock);
	INIT_LIST_HEAD(&region->exports);
	region->kind = NCCOM_REGION_VMAP;
	region->access = access;
	region->length = dmabuf->size;
	region->dmabuf = dmabuf;
	ret = nccom_region_attach(region);
	if (ret) {
		kfree(region);
		return ERR_PTR(ret);
	}
	get_dma_buf(dmabuf);
	return region;
}

static int nccom_import_check(struct nccom_mem_import_dmabuf *cmd)
{
	if (cmd->__reserved || cmd->__reserved2 || !cmd->flags ||
	    (cmd->flags & ~(u32)(NCCOM_MEM_READ | NCCOM_MEM_WRITE)))
		return -EINVAL;
	if (!PAGE_ALIGNED(cmd->offset) || !PAGE_ALIGNED(cmd->length))
		return -EINVAL;
	return 0;
}

int nccom_ioctl_mem_import_dmabuf(struct nccom_ucmd *ucmd)
{
	struct nccom_mem_import_dmabuf *cmd = ucmd->cmd;
	struct nccom_region *region;
	struct dma_buf *dmabuf;
	struct nccom_mem *mem;
	u64 length, end;
	int ret;

	ret = nccom_import_check(cmd);
	if (ret)
		return ret;
	dmabuf = dma_buf_get(cmd->fd);
	if (IS_ERR(dmabuf))
		return -EBADF;
	length = cmd->length;
	if (!length)
		length = dmabuf->size - min_t(u64, cmd->offset, dmabuf->size);
	if (check_add_overflow(cmd->offset, length, &end) ||
	    end > dmabuf->size || !length) {
		ret = -EOVERFLOW;
		goto err_put_dmabuf;
	}
	region = nccom_region_import(dmabuf, cmd->flags);
	if (IS_ERR(region)) {
		ret = PTR_ERR(region);
		goto err_put_dmabuf;
	}
	mem = nccom_mem_create(ucmd->ctx, region, cmd->flags, cmd->offset,
			       length);
	nccom_region_put(region);
	if (IS_ERR(mem)) {
		ret = PTR_ERR(mem);
		goto err_put_dmabuf;
	}
	dma_buf_put(dmabuf);
	cmd->out_handle = mem->obj.id;
	cmd->out_length = length;
	ret = nccom_ucmd_respond(ucmd, sizeof(*cmd));
	if (ret) {
		nccom_region_put(mem->region);
		nccom_obj_abort(&mem->obj);
		return ret;
	}
	nccom_obj_finalize(&mem->obj);
	return 0;

err_put_dmabuf:
	dma_buf_put(dmabuf);
	return ret;
}
