# SPDX-License-Identifier: GPL-2.0-or-later
# bpf/ rules: the CO-RE object and its libbpf skeleton.
#
# bpf/imbalance.bpf.c is compiled against the committed type dump
# bpf/vmlinux/vmlinux_$(BPF_ARCH).h (selected by bpf/vmlinux.h), stripped of
# DWARF, and turned into bpf/imbalance.skel.h in the build directory.  The
# generated files are not distributed; `make vmlinux-update` refreshes the
# committed dump from the running kernel's BTF.

# BPF_ARCH comes from configure; when it is empty (no AC_CANONICAL_HOST),
# the recipe derives it from `uname -m` the same way.
BPF_ARCH_SH = arch='$(BPF_ARCH)'; test -n "$$arch" || \
	case `uname -m` in x86_64|i?86) arch=x86;; aarch64) arch=arm64;; *) arch=`uname -m`;; esac
BPF_CFLAGS = -g -O2 -target bpf -I$(srcdir)/bpf -I$(srcdir)/bpf/vmlinux \
	-Wall -Wno-unused-function

bpf/imbalance.bpf.o: $(srcdir)/bpf/imbalance.bpf.c $(srcdir)/bpf/imbalance.h \
		$(srcdir)/bpf/core_fixes.bpf.h $(srcdir)/bpf/vmlinux.h \
		$(srcdir)/bpf/vmlinux/vmlinux_x86.h
	$(AM_V_GEN)$(MKDIR_P) bpf && $(BPF_ARCH_SH); \
	$(CLANG) $(BPF_CFLAGS) -D__TARGET_ARCH_$$arch \
		-c $(srcdir)/bpf/imbalance.bpf.c -o $@.tmp && \
	$(LLVM_STRIP) -g $@.tmp && mv $@.tmp $@

bpf/imbalance.skel.h: bpf/imbalance.bpf.o
	$(AM_V_GEN)$(BPFTOOL) gen skeleton bpf/imbalance.bpf.o name imbalance > $@.tmp && \
	mv $@.tmp $@

BUILT_SOURCES += bpf/imbalance.skel.h
CLEANFILES += bpf/imbalance.bpf.o bpf/imbalance.skel.h \
	bpf/imbalance.bpf.o.tmp bpf/imbalance.skel.h.tmp
EXTRA_DIST += bpf/imbalance.bpf.c bpf/imbalance.h bpf/core_fixes.bpf.h \
	bpf/vmlinux.h bpf/vmlinux/vmlinux_x86.h

# Regenerate the committed type dump of this architecture from the running kernel.
vmlinux-update:
	$(BPF_ARCH_SH); \
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c \
		> $(srcdir)/bpf/vmlinux/vmlinux_$$arch.h.tmp && \
	mv $(srcdir)/bpf/vmlinux/vmlinux_$$arch.h.tmp $(srcdir)/bpf/vmlinux/vmlinux_$$arch.h
.PHONY: vmlinux-update
