# SPDX-License-Identifier: GPL-2.0-only
#
# Read after SQLite's own generated Makefile (make -f Makefile -f print-vars.mk,
# in its build directory): prints, as make assignments, how SQLite's build
# compiles and links testfixture, so tests/sqlite/Makefile compiles the same
# sources with the same flags (in parallel, and relinking only what changed).
print-vars:
	@echo '# generated from $(abspath Makefile) by print-vars.mk'
	@echo 'SQ_CC = $(TCC)'
	@echo 'SQ_FLAGS = -DSQLITE_NO_SYNC=1 $(TEMP_STORE) $(TESTFIXTURE_FLAGS)'
	@echo 'SQ_SRC = $(abspath $(TESTFIXTURE_SRC))'
	@echo 'SQ_LIBS = $(LIBTCL) $(TLIBS)'
	@echo 'SQ_USE_AMALGAMATION = $(USE_AMALGAMATION)'
