# SPDX-License-Identifier: GPL-2.0
# sed script: add the coarse_stat functions to vdso(7)'s aarch64, i386,
# x86-64 and x86/x32 tables, and coarse_stat(7) to SEE ALSO (man-pages 6.20
# layout).
/^\.SS aarch64 functions$/,/^\.TE$/{
/^__kernel_clock_getres\tLINUX_2\.6\.39$/a\
__kernel_coarse_stat_snap\tLINUX_2.6.39\
__kernel_coarse_stat_cpu_snap\tLINUX_2.6.39
}
/^\.SS i386 functions$/,/^\.TE$/{
/^__vdso_time\tLINUX_2\.6 (exported since Linux 3\.15)$/a\
__vdso_coarse_stat_snap\tLINUX_2.6\
__vdso_coarse_stat_cpu_snap\tLINUX_2.6
}
/^\.SS x86-64 functions$/,/^\.TE$/{
/^you should ignore those and stick to the names below\.$/a\
The coarse_stat functions have only the names with the prefix.
/^__vdso_time\tLINUX_2\.6$/a\
__vdso_coarse_stat_snap\tLINUX_2.6\
__vdso_coarse_stat_cpu_snap\tLINUX_2.6
}
/^\.SS x86\/x32 functions$/,/^\.TE$/{
/^__vdso_time\tLINUX_2\.6$/a\
__vdso_coarse_stat_snap\tLINUX_2.6\
__vdso_coarse_stat_cpu_snap\tLINUX_2.6
}
s/^\.BR proc (5)$/.BR proc (5),\
.BR coarse_stat (7)/
