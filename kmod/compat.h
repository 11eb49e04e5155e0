/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat.h - the kernel interfaces that differ between the kernels
 * pathtrace.ko builds for (Debian's 6.1 and 6.12; docs/kernels.md), behind
 * one name each. Every kernel-version difference of the module lives here.
 *
 * The selection is by feature test, not by version: kmod/Kbuild greps the
 * tree's headers and defines PT_HAVE_* (a stable update can change a
 * signature inside a series, as 6.12.113 did to
 * ring_buffer_alloc_read_page). A test that misses selects the other
 * signature, which then fails to compile: never a silent mismatch.
 *
 *   PT_HAVE_RB_COMMIT_BUFFER_ONLY  ring_buffer_unlock_commit(buffer) (6.2)
 *   PT_HAVE_RB_READ_PAGE_STRUCT    read pages are struct buffer_data_read_page
 *                                  (sub-buffers of 2^order pages; 6.8)
 *   PT_HAVE_RB_ALLOC_READ_PAGE_OUT ring_buffer_alloc_read_page returns an
 *                                  errno and the page through a pointer
 *                                  (6.12.113)
 *   PT_HAVE_PCPU_HOT_PREEMPT_COUNT the preempt count is pcpu_hot's (6.2)
 */
#ifndef PATHTRACE_COMPAT_H
#define PATHTRACE_COMPAT_H

#include <linux/err.h>
#include <linux/preempt.h>
#include <linux/ring_buffer.h>

/* The per-CPU address of the preempt count (an offset from %gs's base). */
static inline unsigned long pt_preempt_count_pcpu(void)
{
#ifdef PT_HAVE_PCPU_HOT_PREEMPT_COUNT
	return (unsigned long)&pcpu_hot.preempt_count;
#else
	return (unsigned long)&__preempt_count;
#endif
}

/* Commits the event just reserved on this CPU (ring_buffer_lock_reserve). */
static inline void pt_rb_unlock_commit(struct trace_buffer *buffer,
				       struct ring_buffer_event *ev)
{
#ifdef PT_HAVE_RB_COMMIT_BUFFER_ONLY
	ring_buffer_unlock_commit(buffer);
#else
	ring_buffer_unlock_commit(buffer, ev);
#endif
}

/*
 * A read page is an opaque handle: the data page itself up to 6.7, a
 * struct buffer_data_read_page after. Its bytes, in ring_buffer_read_page()
 * layout, are at pt_rb_read_page_data(). pathtrace never changes the
 * sub-buffer order, so a read page is one PAGE_SIZE page on both.
 */

/* Returns the handle or an ERR_PTR (-ENOMEM). */
static inline void *pt_rb_alloc_read_page(struct trace_buffer *buffer, int cpu)
{
#if defined(PT_HAVE_RB_ALLOC_READ_PAGE_OUT)
	struct buffer_data_read_page *rpage;
	int err = ring_buffer_alloc_read_page(buffer, cpu, &rpage);

	return err ? ERR_PTR(err) : rpage;
#else
	return ring_buffer_alloc_read_page(buffer, cpu);
#endif
}

/*
 * Reads one page of @cpu's buffer into *@page (the kernel may swap the
 * page behind the handle). Returns the offset of the data read, or a
 * negative errno (nothing to read).
 */
static inline int pt_rb_read_page(struct trace_buffer *buffer, void **page,
				  size_t len, int cpu, int full)
{
#ifdef PT_HAVE_RB_READ_PAGE_STRUCT
	return ring_buffer_read_page(buffer, *page, len, cpu, full);
#else
	return ring_buffer_read_page(buffer, page, len, cpu, full);
#endif
}

/* The bytes of a read page (ring_buffer_read_page() layout). */
static inline void *pt_rb_read_page_data(void *page)
{
#ifdef PT_HAVE_RB_READ_PAGE_STRUCT
	return ring_buffer_read_page_data(page);
#else
	return page;
#endif
}

static inline void pt_rb_free_read_page(struct trace_buffer *buffer, int cpu,
					void *page)
{
	ring_buffer_free_read_page(buffer, cpu, page);
}

#endif /* PATHTRACE_COMPAT_H */
