# SPDX-License-Identifier: GPL-2.0-or-later
# tests/ - unit tests (C, TAP) and behaviour tests (shell .t, TAP).

IMB_TEST_LIBS = analyzers/libimbcore.a -lm
