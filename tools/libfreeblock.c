// SPDX-License-Identifier: GPL-2.0-only
/*
 * libfreeblock: the /dev/freeblock client shared by fb-scrub, fb-backup and
 * the tests (see libfreeblock.h for the API). The ring is the kernel's: the library
 * reads what the header and descriptors say only after checking it, keeps
 * its own bitmap of delivered blocks (exactly once, the resume prefix),
 * and never trusts a slot or block number it was not asked for.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/freeblock.h>

#include "libfreeblock.h"

#define FB_DEFAULT_BLKSIZE	65536U
#define FB_DEFAULT_SLOTS	16U

struct fb_task {
	int fd;				/* /dev/freeblock */
	struct fb_scrub_req req;	/* as registered: id, nblocks, ring_bytes */
	void *ring;
	volatile struct fb_ring_hdr *hdr;
	const struct fb_desc *desc;
	const uint8_t *data;
	uint32_t tail;			/* descriptors consumed */
	uint64_t done;			/* blocks delivered */
	uint64_t prefix;		/* blocks 0..prefix-1 delivered */
	uint64_t *seen;			/* bitmap of delivered blocks */
	int ended;			/* ended and drained */
	int broken;			/* the kernel wrote a bad descriptor */
	/* write tasks */
	int write;
	uint32_t filled_seq;		/* hdr->want_seq last answered */
	void *fillbuf;			/* blksize bytes for fb_fill_fn */
	uint32_t fillbuf_seq;		/* fillbuf holds that request's block */
	int fillbuf_valid;
	int fill_blocked;		/* FB_IOC_FILL of fillbuf_seq: EAGAIN */
};

int fb_dev_size(int fd, uint64_t *bytes)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISBLK(st.st_mode))
		return -ENOTBLK;
	if (ioctl(fd, BLKGETSIZE64, bytes))
		return -errno;
	return 0;
}

/* The header must describe the ring that was asked for, inside the map. */
static int fb_check_ring(const struct fb_task *t)
{
	const volatile struct fb_ring_hdr *h = t->hdr;
	uint64_t desc_end, data_end;

	if (h->magic != FB_RING_MAGIC || h->nslots != t->req.nslots ||
	    h->slot_bytes != t->req.blksize || h->nblocks != t->req.nblocks)
		return -EPROTO;
	desc_end = (uint64_t)h->desc_off +
		   (uint64_t)h->nslots * sizeof(struct fb_desc);
	data_end = h->data_off + (uint64_t)h->nslots * h->slot_bytes;
	if (h->desc_off < sizeof(struct fb_ring_hdr) ||
	    h->desc_off % sizeof(uint64_t) || desc_end > t->req.ring_bytes ||
	    h->data_off < desc_end || data_end > t->req.ring_bytes ||
	    data_end < h->data_off)
		return -EPROTO;
	return 0;
}

static int fb_task_register(struct fb_task **out, int devfd,
			    const struct fb_task_opts *opts, int write)
{
	static const struct fb_task_opts defaults;
	const struct fb_task_opts *o = opts ? opts : &defaults;
	struct fb_task *t;
	int ret;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->ring = MAP_FAILED;
	t->fd = open("/dev/" FREEBLOCK_DEV_NAME, O_RDWR | O_CLOEXEC);
	if (t->fd < 0) {
		ret = -errno;
		goto err;
	}
	t->req.fd = devfd;
	t->req.blksize = o->blksize ? o->blksize : FB_DEFAULT_BLKSIZE;
	t->req.start = o->start;
	t->req.len = o->len;
	t->req.nslots = o->nslots ? o->nslots : FB_DEFAULT_SLOTS;
	t->req.floor_kbps = o->floor_kbps;
	t->req.ceiling_kbps = o->ceiling_kbps;
	t->req.flags = o->any_order ? FB_SCRUB_F_SPECULATIVE : 0;
	t->write = write;
	if (write) {
		t->fillbuf = malloc(t->req.blksize);
		if (!t->fillbuf) {
			ret = -ENOMEM;
			goto err;
		}
	}
	if (ioctl(t->fd, write ? FB_IOC_WRITE : FB_IOC_SCRUB, &t->req)) {
		ret = -errno;
		goto err;
	}
	if (!t->req.nblocks || !t->req.ring_bytes) {
		ret = -EPROTO;
		goto err;
	}
	t->seen = calloc((t->req.nblocks + 63) / 64, sizeof(*t->seen));
	if (!t->seen) {
		ret = -ENOMEM;
		goto err;
	}
	t->ring = mmap(NULL, t->req.ring_bytes, PROT_READ, MAP_SHARED, t->fd, 0);
	if (t->ring == MAP_FAILED) {
		ret = -errno;
		goto err;
	}
	t->hdr = t->ring;
	ret = fb_check_ring(t);
	if (ret)
		goto err;
	t->desc = (const struct fb_desc *)((const char *)t->ring +
					   t->hdr->desc_off);
	t->data = (const uint8_t *)t->ring + t->hdr->data_off;
	if (o->promote && ioctl(t->fd, FB_IOC_PROMOTE)) {
		ret = -errno;
		goto err;
	}
	*out = t;
	return 0;

err:
	fb_task_close(t);
	return ret;
}

int fb_task_open(struct fb_task **out, int devfd,
		 const struct fb_task_opts *opts)
{
	return fb_task_register(out, devfd, opts, 0);
}

int fb_task_open_write(struct fb_task **out, int devfd,
		       const struct fb_task_opts *opts)
{
	return fb_task_register(out, devfd, opts, 1);
}

/*
 * Deliver descriptors tail..head; stop early at a nonzero callback (its
 * value is returned) or a bad descriptor (t->broken).
 */
static int fb_deliver(struct fb_task *t, uint32_t head, fb_block_fn fn,
		      void *ctx)
{
	uint32_t nslots = t->req.nslots, len = t->req.blksize;
	int ret = 0;

	if (head - t->tail > nslots) {
		t->broken = 1;	/* more descriptors than the ring holds */
		return 0;
	}
	while (t->tail != head && !ret) {
		const struct fb_desc *d = &t->desc[t->tail % nslots];
		uint64_t lbn = d->lbn;
		uint32_t slot = d->slot;
		int status = d->status;

		if (lbn >= t->req.nblocks || slot >= nslots || status > 0 ||
		    (t->seen[lbn / 64] >> (lbn % 64)) & 1) {
			t->broken = 1;
			break;
		}
		t->seen[lbn / 64] |= 1ULL << (lbn % 64);
		t->done++;
		t->tail++;
		ret = fn(ctx, lbn, status,
			 status ? NULL : t->data + (uint64_t)slot * len, len);
	}
	while (t->prefix < t->req.nblocks &&
	       (t->seen[t->prefix / 64] >> (t->prefix % 64)) & 1)
		t->prefix++;
	return ret;
}

/*
 * A write task's request for data not answered yet: the block, or -1.
 * want_pending is read before want_lbn (the kernel stores them the other
 * way round).
 */
static int64_t fb_wanted(const struct fb_task *t, uint32_t *seq)
{
	if (!t->write ||
	    !__atomic_load_n(&t->hdr->want_pending, __ATOMIC_ACQUIRE))
		return -1;
	*seq = __atomic_load_n(&t->hdr->want_seq, __ATOMIC_ACQUIRE);
	if (*seq == t->filled_seq)
		return -1;
	return t->hdr->want_lbn;
}

/*
 * Hand the kernel the block it asked for. Return: 0 (done, or no free slot
 * yet: tried again at the next step without calling @fill again), a
 * negative errno, or @fill's nonzero value in *@stop.
 */
static int fb_answer(struct fb_task *t, uint64_t lbn, uint32_t seq,
		     fb_fill_fn fill, void *ctx, int *stop)
{
	struct fb_fill f = {
		.lbn = lbn,
		.data = (uintptr_t)t->fillbuf,
		.len = t->req.blksize,
	};
	int ret;

	if (lbn >= t->req.nblocks) {
		t->broken = 1;
		return -EPROTO;
	}
	if (!t->fillbuf_valid || t->fillbuf_seq != seq) {
		ret = fill(ctx, lbn, t->fillbuf, t->req.blksize);
		if (ret) {
			*stop = ret;
			return 0;
		}
		t->fillbuf_seq = seq;
		t->fillbuf_valid = 1;
	}
	if (ioctl(t->fd, FB_IOC_FILL, &f)) {
		if (errno == EAGAIN) {
			t->fill_blocked = 1;	/* every slot is in flight */
			return 0;
		}
		/* EINVAL: the task ended meanwhile or asked for another */
		if (errno == EINVAL &&
		    (__atomic_load_n(&t->hdr->state, __ATOMIC_ACQUIRE) ==
		     FB_STATE_ENDED ||
		     __atomic_load_n(&t->hdr->want_seq, __ATOMIC_ACQUIRE) != seq))
			return 0;
		return -errno;
	}
	t->filled_seq = seq;
	t->fill_blocked = 0;
	return 0;
}

static int fb_task_step(struct fb_task *t, int timeout_ms, fb_fill_fn fill,
			fb_block_fn fn, void *ctx)
{
	struct pollfd pfd = { .fd = t->fd, .events = POLLIN };
	uint32_t state, head, tail, seq = 0;
	int64_t want;
	int ret, stop = 0;

	if (t->broken)
		return -EPROTO;
	if (t->ended)
		return 1;
	state = __atomic_load_n(&t->hdr->state, __ATOMIC_ACQUIRE);
	head = __atomic_load_n(&t->hdr->head, __ATOMIC_ACQUIRE);
	want = state == FB_STATE_ENDED ? -1 : fb_wanted(t, &seq);
	if (want >= 0 && t->fill_blocked && t->fillbuf_seq == seq)
		want = -1;	/* wait for a slot: POLLIN or POLLOUT */
	if (head == t->tail && state != FB_STATE_ENDED && want < 0 &&
	    timeout_ms) {
		if (t->write)
			pfd.events |= POLLOUT;
		if (poll(&pfd, 1, timeout_ms) < 0)
			return errno == EINTR ? 0 : -errno;
		state = __atomic_load_n(&t->hdr->state, __ATOMIC_ACQUIRE);
		head = __atomic_load_n(&t->hdr->head, __ATOMIC_ACQUIRE);
	}
	tail = t->tail;
	ret = fb_deliver(t, head, fn, ctx);
	if (t->broken)
		return -EPROTO;
	/* the blocks delivered, a stopping one included, are given back */
	if (t->tail != tail &&
	    ioctl(t->fd, FB_IOC_CONSUME, (unsigned long)t->tail))
		return -errno;
	if (ret)
		return ret;
	/* state was read before head: ENDED means every descriptor is in */
	if (state == FB_STATE_ENDED && t->tail == head) {
		t->ended = 1;
		return 1;
	}
	if (state != FB_STATE_ENDED) {
		want = fb_wanted(t, &seq);
		if (want >= 0) {
			ret = fb_answer(t, want, seq, fill, ctx, &stop);
			if (ret)
				return ret;
			if (stop)
				return stop;
		}
	}
	return 0;
}

int fb_task_poll(struct fb_task *t, int timeout_ms, fb_block_fn fn,
		 void *ctx)
{
	if (t->write)
		return -EINVAL;
	return fb_task_step(t, timeout_ms, NULL, fn, ctx);
}

int fb_task_poll_write(struct fb_task *t, int timeout_ms, fb_fill_fn fill,
		       fb_block_fn done, void *ctx)
{
	if (!t->write)
		return -EINVAL;
	return fb_task_step(t, timeout_ms, fill, done, ctx);
}

int fb_task_abort(struct fb_task *t)
{
	return ioctl(t->fd, FB_IOC_ABORT) ? -errno : 0;
}

int fb_task_promote(struct fb_task *t)
{
	return ioctl(t->fd, FB_IOC_PROMOTE) ? -errno : 0;
}

int fb_task_result(const struct fb_task *t)
{
	if (__atomic_load_n(&t->hdr->state, __ATOMIC_ACQUIRE) != FB_STATE_ENDED)
		return 1;
	return t->hdr->result > 0 ? -EPROTO : t->hdr->result;
}

uint64_t fb_task_nblocks(const struct fb_task *t)
{
	return t->req.nblocks;
}

uint64_t fb_task_done(const struct fb_task *t)
{
	return t->done;
}

uint64_t fb_task_prefix(const struct fb_task *t)
{
	return t->prefix;
}

uint32_t fb_task_id(const struct fb_task *t)
{
	return t->req.id;
}

int fb_task_fd(const struct fb_task *t)
{
	return t->fd;
}

void fb_task_close(struct fb_task *t)
{
	if (!t)
		return;
	if (t->ring != MAP_FAILED)
		munmap(t->ring, t->req.ring_bytes);
	if (t->fd >= 0)
		close(t->fd);
	free(t->seen);
	free(t->fillbuf);
	free(t);
}
