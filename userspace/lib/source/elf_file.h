/* SPDX-License-Identifier: GPL-2.0 */
/*
 * elf_file - an ELF file for libelf as the kernel installs modules: plain,
 * or compressed whole with xz (.ko.xz), zstd (.ko.zst) or gzip (.ko.gz),
 * which are recognized by their magic bytes and decompressed into memory
 * with liblzma, libzstd and zlib.
 */
#ifndef PATHTRACE_ELF_FILE_H
#define PATHTRACE_ELF_FILE_H

#include <libelf.h>
#include <stddef.h>

struct elf_file {
	Elf *elf;
	int fd;			/* -1 once read into image */
	char *image;		/* the decompressed file (malloc'd), or NULL */
	size_t size;
};

/*
 * Opens path for elf_file.elf (an ELF of any kind, not checked further).
 * Returns 0; -PT_EIO (errno set) when it cannot be opened or read;
 * -PT_EFORMAT for a compressed stream that does not decompress or a file
 * libelf refuses; -PT_ENOMEM. Close it with elf_file_close either way.
 */
int elf_file_open(const char *path, struct elf_file *ef);

void elf_file_close(struct elf_file *ef);

#endif
