// SPDX-License-Identifier: GPL-2.0
/* funcstore - per-function metadata kept from enable to record (see funcstore.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pathtrace/error.h>
#include <pathtrace/funcstore.h>

const char *funcstore_dir(void)
{
	const char *d = getenv("PATHTRACE_STATE");

	return d && *d ? d : "/run/pathtrace";
}

static void path_of(uint32_t func_id, char *buf, size_t n, const char *suffix)
{
	snprintf(buf, n, "%s/func-%u.bin%s", funcstore_dir(), func_id, suffix);
}

int funcstore_save(const struct tf_function *fn)
{
	char tmp[4096], final[4096];
	struct tf_writer w;
	int err;

	if (mkdir(funcstore_dir(), 0700) && errno != EEXIST)
		return -PT_EIO;
	path_of(fn->func_id, tmp, sizeof(tmp), ".tmp");
	path_of(fn->func_id, final, sizeof(final), "");
	err = tfw_open(&w, tmp);
	if (!err)
		err = tfw_function(&w, fn);
	if (w.f) {
		int cerr = tfw_close(&w);

		if (!err)
			err = cerr;
	}
	if (!err && rename(tmp, final))
		err = -PT_EIO;
	if (err)
		unlink(tmp);
	return err;
}

int funcstore_load(uint32_t func_id, struct tracefile *tf)
{
	char path[4096];
	int err;

	path_of(func_id, path, sizeof(path), "");
	if (access(path, R_OK)) {
		memset(tf, 0, sizeof(*tf));
		return errno == ENOENT ? -PT_ENOENT : -PT_EIO;
	}
	err = tracefile_read(path, tf);
	if (err)
		return err;
	if (tf->nfuncs != 1 || tf->funcs[0].func_id != func_id)
		return -PT_EFORMAT;
	return 0;
}

int funcstore_remove(uint32_t func_id)
{
	char path[4096];

	path_of(func_id, path, sizeof(path), "");
	return unlink(path) && errno != ENOENT ? -PT_EIO : 0;
}
