/* SPDX-License-Identifier: GPL-2.0 */
/*
 * abi_struct - loading a self-sized ABI struct by the growth rules of
 * trace-format/pathtrace_abi.h, shared by the plan blob and trace.bin
 * readers.
 */
#ifndef PATHTRACE_ABI_STRUCT_H
#define PATHTRACE_ABI_STRUCT_H

#include <stddef.h>

/*
 * Copies a struct that takes in_size bytes in the input into dst
 * (dst_size bytes, what this build knows): a smaller in_size reads the
 * missing fields as zero, a larger one is accepted only if the bytes this
 * build does not know are zero. Returns 0, or -PT_EFORMAT for non-zero
 * unknown bytes (dst is then undefined).
 */
int abi_struct_load(void *dst, size_t dst_size, const void *src, size_t in_size);

#endif
