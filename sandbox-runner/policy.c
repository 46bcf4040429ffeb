#include "policy.h"

#include <stdio.h>

#include "pathrules.h"

const char *pol_paths(const struct cfg *cfg, const struct job *j, char *why, size_t whylen)
{
	const char *r;

	if (*j->cwd && (r = pr_job_path(cfg, j->cwd)) != NULL) {
		snprintf(why, whylen, "cwd %s", r);
		return why;
	}
	if (j->artifacts_dir && (r = pr_job_path(cfg, j->artifacts_dir)) != NULL) {
		snprintf(why, whylen, "artifacts %s", r);
		return why;
	}
	for (size_t i = 0; i < j->nfiles; i++)
		if ((r = pr_job_path(cfg, j->files[i].path)) != NULL) {
			snprintf(why, whylen, "file path %s", r);
			return why;
		}
	return NULL;
}
