# SPDX-License-Identifier: GPL-2.0-only
#
# Runs one of SQLite's test files as testfixture would, with these additions
# for tests/sqlite/run.py (besides: the capabilities "wal" and "mmap" are
# declared absent, and db_save_and_close closes before it copies, see below):
#
#   testfixture wrap.tcl <sqlite-source>/test/<name>.test
#
# - every failing case prints "mobio-fail: <case>" (SQLite's own summary line
#   "!Failures on these tests:" cannot be split: case names may hold spaces);
# - expected failures: $MOBIO_XFAIL names a file of lines
#       xfail<TAB><glob><TAB><reason>   a failing case matching <glob> (Tcl
#                                       string match) prints "mobio-xfail:
#                                       <case> (<reason>)" instead and is not
#                                       counted; it still runs, as later cases
#                                       may depend on what it did
#       omit<TAB><glob><TAB><reason>    a case (do_test and the do_*_test
#                                       helpers built on it) or a whole
#                                       fault-injection block (do_malloc_test,
#                                       do_ioerr_test, do_faultsim_test: the
#                                       name its cases start with) matching
#                                       <glob> is not run: "mobio-omit: ..."
#       stop<TAB><glob><TAB><reason>    the file ends (finish_test) at the
#                                       first case matching <glob>, which
#                                       is not run: "mobio-stop: ..." (what
#                                       follows cannot run without it)
#   run.py writes it from tests/sqlite/skipped.txt;
# - sqlite3_log() lines from ppcache print "mobio-log: <code> <message>" (a
#   test's own test_sqlite3_log callback still gets every line). The outcome
#   case (<name>.<n>.3) of a do_ioerr_test that fails while ppcache logged
#   "LazyFlush failed" after the I/O error the harness injected
#   (sqlite_io_error_hit) is an expected failure: the I/O error struck a
#   flush after the commit point, the transaction is committed in qNVRAM and
#   its pages stay there (SQLite's ioerr tests expect the statement to fail,
#   as on "unix" the write belongs to the commit). The block's later checks
#   (database contents before or after, integrity) still count.
#
# tester.tcl is sourced here first, then again by the test file; the second
# time is a no-op (::tester_tcl_has_run), so the procs replaced here stay
# replaced. Helpers the test file sources later (malloc_common.tcl) are
# wrapped after each source.

set mobio(file) [file normalize [lindex $argv 0]]
set argv [lrange $argv 1 end]
set argv0 $mobio(file)
set testdir [file dirname $argv0]

set mobio(xfail) {}
set mobio(omit) {}
set mobio(stop) {}
if {[info exists env(MOBIO_XFAIL)] && $env(MOBIO_XFAIL) ne ""} {
  set fd [open $env(MOBIO_XFAIL)]
  foreach line [split [read $fd] \n] {
    set f [split $line \t]
    if {[llength $f] < 3} continue
    lappend mobio([lindex $f 0]) [lindex $f 1] [join [lrange $f 2 end] \t]
  }
  close $fd
}

source $testdir/tester.tcl

# --- what the VFS offers -----------------------------------------------------
# ppcache refuses WAL and has no memory-mapped I/O (io_methods version 1):
# declare both absent, as in a build without them (SQLITE_OMIT_WAL,
# SQLITE_MAX_MMAP_SIZE=0), so that the tests' own "ifcapable wal" and
# "ifcapable mmap" skip what needs them. Not for the stock "unix" baseline.
if {![info exists env(MOBIO_SQLITE_TESTS_VFS)] || $env(MOBIO_SQLITE_TESTS_VFS) ne "unix"} {
  set sqlite_options(wal) 0
  set sqlite_options(mmap) 0
}

# db_save_and_close copies test.db* while [db] is open, then closes it. Under
# ppcache a copy of an open database lacks what is still in qNVRAM and carries
# the fence (opening it is refused), so close first, then copy: with no
# transaction open (the helper's premise) the saved state is the same.
proc db_save_and_close {} {
  catch { db close }
  db_save
  return ""
}

# --- ppcache's log lines ------------------------------------------------------
set mobio(log) 0          ;# "LazyFlush failed" lines so far
set mobio(case_log) 0     ;# ... when the current case started
set mobio(user_log) ""
proc mobio_log {code msg} {
  if {[string match "ppcache*" $msg]} {
    puts "mobio-log: $code $msg"
    # only where SQLite's harness injected the I/O error (os_unix.c counters)
    if {[string match "*LazyFlush failed*" $msg]
        && ($::sqlite_io_error_hit > 0 || $::sqlite_io_error_hardhit > 0)} {
      incr ::mobio(log)
    }
  }
  if {$::mobio(user_log) ne ""} {
    uplevel #0 [list {*}$::mobio(user_log) $code $msg]
  }
}
rename test_sqlite3_log mobio_sqlite3_log
proc test_sqlite3_log {args} {
  set ::mobio(user_log) [lindex $args 0]
  mobio_sqlite3_log mobio_log
}
catch {db close}
sqlite3_shutdown
mobio_sqlite3_log mobio_log
sqlite3_initialize
autoinstall_test_functions   ;# sqlite3_shutdown dropped the auto-extensions
reset_db

# --- expected failures and omitted cases ------------------------------------
proc mobio_match {kind name} {
  foreach {pat reason} $::mobio($kind) {
    if {[string match $pat $name]} { return [list 1 $reason] }
  }
  return 0
}

rename fail_test mobio_sqlite_fail_test
proc fail_test {name} {
  set m [mobio_match xfail $name]
  if {[lindex $m 0]} {
    puts "mobio-xfail: $name ([lindex $m 1])"
    return
  }
  if {$::mobio(log) > $::mobio(case_log) && $::mobio(ioerr_block) ne ""
      && [string match "$::mobio(ioerr_block).*.3" $name]} {
    puts "mobio-xfail: $name (I/O error in a LazyFlush after the commit point: committed in qNVRAM)"
    return
  }
  puts "mobio-fail: $name"
  mobio_sqlite_fail_test $name
}

rename do_test mobio_sqlite_do_test
proc do_test {name cmd expected} {
  set n $name
  fix_testname n
  set m [mobio_match omit $n]
  if {[lindex $m 0]} {
    puts "mobio-omit: $n ([lindex $m 1])"
    incr ::mobio(omitted)
    return
  }
  set m [mobio_match stop $n]
  if {[lindex $m 0]} {
    puts "mobio-stop: $n ([lindex $m 1])"
    finish_test
  }
  set ::mobio(case_log) $::mobio(log)
  uplevel 1 [list mobio_sqlite_do_test $name $cmd $expected]
}

# Top-level code of a test file often closes the connection its previous
# case opened. Once a case has been omitted, "<handle> close" on a handle
# that does not exist is a no-op (printed) instead of an error that would end
# the file; any other unknown command is an error as before.
set mobio(omitted) 0
if {[info commands unknown] ne ""} {
  rename unknown mobio_tcl_unknown
} else {
  proc mobio_tcl_unknown {args} {
    return -code error "invalid command name \"[lindex $args 0]\""
  }
}
proc unknown {args} {
  if {$::mobio(omitted) && [llength $args] == 2 && [lindex $args 1] eq "close"
      && [regexp {^db[0-9]*$} [lindex $args 0]]} {
    puts "mobio-note: [lindex $args 0] close: not open (an omitted case did not open it)"
    return
  }
  uplevel 1 [list mobio_tcl_unknown {*}$args]
}

# A fault-injection block: $name is what its cases are called after.
proc mobio_omit_block {name} {
  set m [mobio_match omit $name]
  if {[lindex $m 0]} {
    puts "mobio-omit: $name (block; [lindex $m 1])"
    incr ::mobio(omitted)
    return 1
  }
  set m [mobio_match stop $name]
  if {[lindex $m 0]} {
    puts "mobio-stop: $name (block; [lindex $m 1])"
    finish_test
  }
  return 0
}
rename do_ioerr_test mobio_sqlite_do_ioerr_test
set mobio(ioerr_block) ""
proc do_ioerr_test {name args} {
  if {[mobio_omit_block $name]} return
  set ::mobio(ioerr_block) $name
  set rc [catch {uplevel 1 [list mobio_sqlite_do_ioerr_test $name {*}$args]} r o]
  set ::mobio(ioerr_block) ""
  return -options $o $r
}
proc mobio_wrap_helpers {} {
  if {[info procs do_malloc_test] ne "" && [info procs mobio_sqlite_do_malloc_test] eq ""} {
    rename do_malloc_test mobio_sqlite_do_malloc_test
    proc do_malloc_test {tn args} {
      set n $tn
      if {[string is integer $n]} {
        set n malloc-$n
        catch { set n $::testprefix-$n }
      }
      if {[mobio_omit_block $n]} return
      uplevel 1 [list mobio_sqlite_do_malloc_test $tn {*}$args]
    }
  }
  if {[info procs do_faultsim_test] ne "" && [info procs mobio_sqlite_do_faultsim_test] eq ""} {
    rename do_faultsim_test mobio_sqlite_do_faultsim_test
    proc do_faultsim_test {name args} {
      set n $name
      fix_testname n
      if {[mobio_omit_block $n]} return
      uplevel 1 [list mobio_sqlite_do_faultsim_test $name {*}$args]
    }
  }
}
# Re-sourcing malloc_common.tcl redefines its procs: wrap them again.
trace add execution source leave {apply {{args} {
  foreach p {do_malloc_test do_faultsim_test} {
    if {[info procs mobio_sqlite_$p] ne "" && [info procs $p] ne ""
        && ![string match "*mobio_*" [info body $p]]} {
      rename mobio_sqlite_$p {}
    }
  }
  mobio_wrap_helpers
}}}

source $mobio(file)
