// SPDX-License-Identifier: GPL-2.0
/* funcstore: what enable saves, record loads back byte for byte; errors for the rest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pathtrace/error.h>
#include <pathtrace/funcstore.h>

#include "tf_sample.h"
#include "unit.h"

static void test_save_load(void)
{
	char dir[] = "/tmp/pt-funcstore-XXXXXX";
	struct tf_function fn;
	struct tracefile tf;
	struct cfg c;
	uint8_t *blob;
	uint32_t blob_len;
	char path[128], other[128];
	FILE *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	setenv("PATHTRACE_STATE", dir, 1);
	CU_ASSERT_STRING_EQUAL(funcstore_dir(), dir);
	sample_cfg(&c);
	CU_ASSERT_EQUAL_FATAL(cfg_blob_encode(&c, &blob, &blob_len), 0);
	memset(&fn, 0, sizeof(fn));
	fn.func_id = 31;
	fn.addr = SAMPLE_ADDR;
	fn.len = SAMPLE_LEN;
	fn.name = "sample_fn";
	fn.name_len = 9;
	fn.code = sample_code;
	fn.cfg = blob;
	fn.cfg_len = blob_len;
	fn.plan = sample_plan(&fn.plan_len);

	CU_ASSERT_EQUAL(funcstore_load(31, &tf), -PT_ENOENT);
	tracefile_free(&tf);
	CU_ASSERT_EQUAL_FATAL(funcstore_save(&fn), 0);
	CU_ASSERT_EQUAL_FATAL(funcstore_load(31, &tf), 0);
	CU_ASSERT_EQUAL_FATAL(tf.nfuncs, 1);
	CU_ASSERT_EQUAL(tf.funcs[0].addr, SAMPLE_ADDR);
	CU_ASSERT_EQUAL(memcmp(tf.funcs[0].code, sample_code, SAMPLE_LEN), 0);
	CU_ASSERT_EQUAL_FATAL(tf.funcs[0].cfg_len, blob_len);
	CU_ASSERT_EQUAL(memcmp(tf.funcs[0].cfg, blob, blob_len), 0);
	CU_ASSERT_EQUAL_FATAL(tf.funcs[0].plan_len, fn.plan_len);
	CU_ASSERT_EQUAL(memcmp(tf.funcs[0].plan, fn.plan, fn.plan_len), 0);
	tracefile_free(&tf);

	/* A file that holds another function's data is refused. */
	snprintf(path, sizeof(path), "%s/func-31.bin", dir);
	snprintf(other, sizeof(other), "%s/func-32.bin", dir);
	CU_ASSERT_EQUAL(rename(path, other), 0);
	CU_ASSERT_EQUAL(funcstore_load(32, &tf), -PT_EFORMAT);
	tracefile_free(&tf);
	/* A damaged file: the reader's error. */
	snprintf(path, sizeof(path), "%s/func-33.bin", dir);
	f = fopen(path, "wb");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("PTTRACE", f);
	fclose(f);
	CU_ASSERT_EQUAL(funcstore_load(33, &tf), -PT_ETRUNC);
	tracefile_free(&tf);

	CU_ASSERT_EQUAL(funcstore_remove(32), 0);
	CU_ASSERT_EQUAL(funcstore_remove(32), 0);
	CU_ASSERT_EQUAL(funcstore_remove(33), 0);
	CU_ASSERT_EQUAL(funcstore_load(32, &tf), -PT_ENOENT);
	tracefile_free(&tf);
	CU_ASSERT_EQUAL(rmdir(dir), 0);
	unsetenv("PATHTRACE_STATE");
	free(blob);
}

/* The store's directory and its missing parents are created, private (0700). */
static void test_save_creates_dirs(void)
{
	char top[] = "/tmp/pt-funcstore-XXXXXX";
	char mid[64], dir[96], path[128];
	struct tf_function fn;
	struct tracefile tf;
	struct stat st;
	struct cfg c;
	uint8_t *blob;
	uint32_t blob_len;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(top));
	snprintf(mid, sizeof(mid), "%s/run", top);
	snprintf(dir, sizeof(dir), "%s/pathtrace", mid);
	setenv("PATHTRACE_STATE", dir, 1);
	CU_ASSERT_NOT_EQUAL(stat(mid, &st), 0);
	sample_cfg(&c);
	CU_ASSERT_EQUAL_FATAL(cfg_blob_encode(&c, &blob, &blob_len), 0);
	memset(&fn, 0, sizeof(fn));
	fn.func_id = 7;
	fn.addr = SAMPLE_ADDR;
	fn.len = SAMPLE_LEN;
	fn.name = "sample_fn";
	fn.name_len = 9;
	fn.code = sample_code;
	fn.cfg = blob;
	fn.cfg_len = blob_len;
	fn.plan = sample_plan(&fn.plan_len);

	CU_ASSERT_EQUAL_FATAL(funcstore_save(&fn), 0);
	CU_ASSERT_EQUAL_FATAL(stat(mid, &st), 0);
	CU_ASSERT(S_ISDIR(st.st_mode));
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0700);
	CU_ASSERT_EQUAL_FATAL(stat(dir, &st), 0);
	CU_ASSERT(S_ISDIR(st.st_mode));
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0700);
	CU_ASSERT_EQUAL_FATAL(funcstore_load(7, &tf), 0);
	CU_ASSERT_EQUAL(tf.funcs[0].addr, SAMPLE_ADDR);
	tracefile_free(&tf);
	/* Saving again into the existing directories works too. */
	CU_ASSERT_EQUAL(funcstore_save(&fn), 0);

	/* A parent that is a file: -PT_EIO, nothing created. */
	snprintf(path, sizeof(path), "%s/func-7.bin/sub", dir);
	setenv("PATHTRACE_STATE", path, 1);
	CU_ASSERT_EQUAL(funcstore_save(&fn), -PT_EIO);

	CU_ASSERT_EQUAL(funcstore_remove(7), -PT_EIO);	/* path under a file */
	setenv("PATHTRACE_STATE", dir, 1);
	CU_ASSERT_EQUAL(funcstore_remove(7), 0);
	CU_ASSERT_EQUAL(rmdir(dir), 0);
	CU_ASSERT_EQUAL(rmdir(mid), 0);
	CU_ASSERT_EQUAL(rmdir(top), 0);
	unsetenv("PATHTRACE_STATE");
	free(blob);
}

UNIT_SUITE(funcstore, { "save, load, mismatch, damage, remove", test_save_load },
	   { "save creates missing parent directories 0700", test_save_creates_dirs })
