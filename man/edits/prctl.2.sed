# SPDX-License-Identifier: GPL-2.0
# sed script: add PR_COARSE_STAT to prctl(2)'s list of operations and SEE ALSO
# (man-pages 6.20 layout: the list ends with PR_FUTEX_HASH).
/^\.B PR_FUTEX_HASH$/a\
.TQ\
.B PR_COARSE_STAT
/^\.BR PR_FUTEX_HASH (2const),$/a\
.BR PR_COARSE_STAT (2const),
