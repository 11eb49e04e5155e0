// SPDX-License-Identifier: GPL-2.0
/* noreturn - the built-in list of kernel functions that never return. */
#include <stdlib.h>
#include <string.h>

#include <pathtrace/noreturn.h>

/* Sorted (strcmp order) for bsearch. */
static const char *const noreturns[] = {
	"__invalid_creds",
	"__kunit_abort",
	"__module_put_and_kthread_exit",
	"__reiserfs_panic",
	"__stack_chk_fail",
	"__ubsan_handle_builtin_unreachable",
	"arch_call_rest_init",
	"arch_cpu_idle_dead",
	"cpu_bringup_and_idle",
	"cpu_startup_entry",
	"do_exit",
	"do_group_exit",
	"do_task_dead",
	"ex_handler_msr_mce",
	"fortify_panic",
	"hlt_play_dead",
	"kthread_complete_and_exit",
	"kthread_exit",
	"kunit_try_catch_throw",
	"lbug_with_loc",
	"machine_real_restart",
	"make_task_dead",
	"mpt_halt_firmware",
	"nmi_panic_self_stop",
	"panic",
	"panic_smp_self_stop",
	"rest_init",
	"rewind_stack_and_make_dead",
	"sev_es_terminate",
	"snp_abort",
	"start_kernel",
	"stop_this_cpu",
	"usercopy_abort",
	"xen_cpu_bringup_again",
	"xen_start_kernel",
};

static int cmp(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

int noreturn_builtin(const char *name)
{
	if (!name)
		return 0;
	return !!bsearch(name, noreturns, sizeof(noreturns) / sizeof(noreturns[0]),
			 sizeof(noreturns[0]), cmp);
}
