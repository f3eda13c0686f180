#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# golden.t - `imbalanced analyze` gives, byte for byte, the outputs kept in
# tests/golden/ on every fixture and generated scenario (tests/helpers/golden.sh
# lists the cases).  After a deliberate change of the output, regenerate
# them with `make golden-update` in the build directory (or
# `IMBALANCED=build/imbalanced sh tests/helpers/golden.sh update`), review
# `git diff tests/golden/` and commit them with the change.
: "${top_srcdir:=.}"
export top_srcdir
exec sh "$top_srcdir/tests/helpers/golden.sh" check
