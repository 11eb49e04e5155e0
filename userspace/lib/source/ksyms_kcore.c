// SPDX-License-Identifier: GPL-2.0
/*
 * ksyms_kcore - kernel memory through /proc/kcore, an ELF core file whose
 * PT_LOAD segments map kernel virtual addresses to file offsets. libelf
 * reads the program headers; ELF_C_READ does not read the (huge) file.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <unistd.h>

#include <pathtrace/error.h>
#include <pathtrace/ksyms.h>

struct seg {
	uint64_t vaddr, size, off;
};

struct kcore {
	int fd;
	struct seg *segs;
	size_t nsegs;
};

int kcore_open(const char *path, struct kcore **out)
{
	struct kcore *k;
	GElf_Ehdr eh;
	size_t n, i;
	Elf *e;
	int err = -PT_EFORMAT;

	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -PT_EFORMAT;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -PT_ENOMEM;
	k->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (k->fd < 0) {
		free(k);
		return -PT_EIO;
	}
	e = elf_begin(k->fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) || eh.e_type != ET_CORE ||
	    elf_getphdrnum(e, &n))
		goto fail;
	k->segs = calloc(n ? n : 1, sizeof(*k->segs));
	if (!k->segs) {
		err = -PT_ENOMEM;
		goto fail;
	}
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, i, &ph))
			goto fail;
		if (ph.p_type != PT_LOAD)
			continue;
		k->segs[k->nsegs++] = (struct seg){ ph.p_vaddr, ph.p_filesz, ph.p_offset };
	}
	elf_end(e);
	*out = k;
	return 0;
fail:
	if (e)
		elf_end(e);
	kcore_close(k);
	return err;
}

void kcore_close(struct kcore *k)
{
	if (!k)
		return;
	if (k->fd >= 0)
		close(k->fd);
	free(k->segs);
	free(k);
}

int kcore_read(const struct kcore *k, uint64_t addr, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		const struct seg *s = NULL;
		size_t i, chunk;
		ssize_t r;

		for (i = 0; i < k->nsegs; i++)
			if (addr >= k->segs[i].vaddr && addr - k->segs[i].vaddr < k->segs[i].size) {
				s = &k->segs[i];
				break;
			}
		if (!s)
			return -PT_ENOENT;
		chunk = s->size - (addr - s->vaddr);
		if (chunk > len)
			chunk = len;
		r = pread(k->fd, p, chunk, s->off + (addr - s->vaddr));
		if (r != (ssize_t)chunk)
			return -PT_EIO;
		p += chunk;
		addr += chunk;
		len -= chunk;
	}
	return 0;
}
