// SPDX-License-Identifier: GPL-2.0
/* A fake /proc/kcore for unit tests (fake_kcore.h). */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_kcore.h"

/* Writes a one-segment ELF core at path holding img's allocated sections from base. */
int make_kcore(const char *img, const char *path, uint64_t base, size_t size)
{
	uint8_t *mem = calloc(1, size);
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	Elf_Scn *scn = NULL;
	Elf *e;
	int fd, ok = 0;
	FILE *f;

	elf_version(EV_CURRENT);
	fd = open(img, O_RDONLY);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (mem && e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr s;
		Elf_Data *d;

		gelf_getshdr(scn, &s);
		if (!(s.sh_flags & SHF_ALLOC) || s.sh_type != SHT_PROGBITS || s.sh_addr < base ||
		    s.sh_addr + s.sh_size > base + size)
			continue;
		d = elf_getdata(scn, NULL);
		memcpy(mem + (s.sh_addr - base), d->d_buf, s.sh_size);
		ok++;
	}
	elf_end(e);
	close(fd);
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_CORE;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	memset(&ph, 0, sizeof(ph));
	ph.p_type = PT_LOAD;
	ph.p_offset = 0x1000;
	ph.p_vaddr = base;
	ph.p_filesz = ph.p_memsz = size;
	f = fopen(path, "w");
	if (!f)
		return 0;
	fwrite(&eh, sizeof(eh), 1, f);
	fwrite(&ph, sizeof(ph), 1, f);
	fseek(f, 0x1000, SEEK_SET);
	fwrite(mem, size, 1, f);
	fclose(f);
	free(mem);
	return ok;
}

