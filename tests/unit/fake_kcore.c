// SPDX-License-Identifier: GPL-2.0
/* A fake /proc/kcore for unit tests (fake_kcore.h). */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg_asm.h"
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


int make_fake_kernel(const char *name, const char *text, uint64_t return_thunk,
		     const char *drop, struct fake_kernel *fk)
{
	const char *d = cfg_asm_dir();
	char cmd[2048], path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.s", d, name);
	f = fopen(path, "w");
	if (!f)
		return 0;
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cd %s && gcc -c -o %s.o %s.s && ld -o %s.img -e 0 "
		 "-Ttext=0xffffffff81000000 --defsym=__x86_return_thunk=0x%" PRIx64 " %s.o && "
		 "nm %s.img | grep -v ' A ' %s%s > kallsyms.%s && "
		 "printf '%" PRIx64 " T __x86_return_thunk\\n' >> kallsyms.%s", d,
		 name, name, name, return_thunk, name, name, drop ? "| grep -v " : "",
		 drop ? drop : "", name, return_thunk, name);
	if (system(cmd))
		return 0;
	snprintf(fk->kcore, sizeof(fk->kcore), "%s/kcore.%s", d, name);
	snprintf(fk->kallsyms, sizeof(fk->kallsyms), "%s/kallsyms.%s", d, name);
	snprintf(path, sizeof(path), "%s/%s.img", d, name);
	return make_kcore(path, fk->kcore, 0xffffffff81000000ull, 0x4000);
}
