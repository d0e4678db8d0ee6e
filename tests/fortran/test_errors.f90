!> stat/errmsg on user mistakes, and one stderr line when they are absent.
!> check_profile.py errors checks the file (the mistakes changed nothing)
!> and stderr (which calls printed).
program test_errors
   use scope_profiler
   use sp_test_checks
   use, intrinsic :: iso_c_binding, only: c_int
   implicit none
   integer :: stat
   integer(c_int) :: region
   character(len=200) :: errmsg
   character(len=8) :: short_msg

   call sp_setup('errors.h5', stat=stat)
   call check_int(stat, SP_OK, 'sp_setup stat')

   ! A second sp_setup is refused and leaves the session alone: once
   ! without stat (one stderr line), once with stat and errmsg (silent).
   call sp_setup('other.h5')
   errmsg = ''
   call sp_setup('other.h5', stat=stat, errmsg=errmsg)
   call check_int(stat, SP_ERR_ALREADY_ACTIVE, 'second sp_setup stat')
   call check(index(errmsg, 'sp_setup: ') == 1, 'sp_setup errmsg names the procedure: '//trim(errmsg))
   call check(index(errmsg, 'already active') > 0, 'sp_setup errmsg says why: '//trim(errmsg))
   call check(sp_is_active(), 'the first session is still active')

   ! An end with nothing open.
   errmsg = ''
   call sp_region_end('never_opened', stat, errmsg)
   call check_int(stat, SP_ERR_UNMATCHED_END, 'unmatched end stat')
   call check(index(errmsg, 'sp_region_end: ') == 1, 'unmatched end errmsg: '//trim(errmsg))
   call check(index(errmsg, '"never_opened"') > 0, 'unmatched end errmsg names the region: '//trim(errmsg))
   call check_int(int(sp_last_error()), int(SP_ERR_UNMATCHED_END), 'sp_last_error after it')
   call sp_clear_error()
   call check_int(int(sp_last_error()), int(SP_OK), 'sp_clear_error')

   ! An end of the wrong region changes nothing: open_a stays open.
   call sp_region_begin('open_a')
   call sp_region_end('wrong_b', stat)
   call check_int(stat, SP_ERR_UNMATCHED_END, 'mismatched end stat')
   call sp_region_begin('inner_b')
   call sp_region_end('inner_b', stat)
   call check_int(stat, SP_OK, 'inner_b closes normally')
   call sp_region_end('open_a', stat)
   call check_int(stat, SP_OK, 'open_a survived the mismatched end')

   ! begin nest_a; begin nest_b; end nest_a: nest_a was begun, so this is a
   ! nesting error naming the region still open inside it, not an unmatched
   ! end; nothing changes. Once with stat (silent), once without (one line).
   call sp_region_begin('nest_a')
   call sp_region_begin('nest_b')
   errmsg = ''
   call sp_region_end('nest_a', stat, errmsg)
   call check_int(stat, SP_ERR_NESTING, 'end of the outer region stat')
   call check(index(errmsg, 'sp_region_end: ') == 1, 'nesting errmsg: '//trim(errmsg))
   call check(index(errmsg, '"nest_b"') > 0, 'nesting errmsg names the open region: '//trim(errmsg))
   call check(index(errmsg, 'without a matching begin') == 0, 'not called unmatched: '//trim(errmsg))
   call sp_region_end('nest_a')
   call sp_region_end('nest_b', stat)
   call check_int(stat, SP_OK, 'nest_b closes normally')
   call sp_region_end('nest_a', stat)
   call check_int(stat, SP_OK, 'nest_a survived the nesting error')

   ! errmsg alone also means "the caller handles it"; a short errmsg is
   ! truncated like any character assignment.
   short_msg = 'x'
   call sp_region_end('never_opened', errmsg=short_msg)
   call check_text(short_msg, 'sp_regio', 'short errmsg is truncated')

   ! Without stat: the core reports the unmatched end, the program goes on.
   call sp_region_end('no_stat_end')

   ! Blank names are invalid arguments.
   errmsg = ''
   call sp_region_begin('   ', stat, errmsg)
   call check_int(stat, SP_ERR_INVALID_ARGUMENT, 'blank name begin stat')
   call check(index(errmsg, 'invalid argument') > 0, 'blank name errmsg: '//trim(errmsg))
   call sp_region_end('', stat)
   call check_int(stat, SP_ERR_INVALID_ARGUMENT, 'empty name end stat')
   call sp_region_begin('')               ! without stat: one stderr line
   region = sp_region('  ')
   call check_int(int(region), int(SP_INVALID_REGION), 'sp_region of a blank name')
   call check_int(int(sp_last_error()), int(SP_ERR_INVALID_ARGUMENT), 'sp_last_error after sp_region')

   ! Handles that were never issued.
   call sp_clear_error()
   call sp_begin(123456_c_int)
   call check_int(int(sp_last_error()), int(SP_ERR_INVALID_REGION), 'sp_begin of a bad handle')
   call sp_begin(SP_INVALID_REGION)
   call check_int(int(sp_last_error()), int(SP_ERR_INVALID_REGION), 'sp_begin(SP_INVALID_REGION)')
   call check_text(sp_region_name(SP_INVALID_REGION), '', 'sp_region_name of a bad handle')

   call sp_region_begin('after_errors')
   call sp_region_end('after_errors')
   call sp_finalize(stat, errmsg)
   call check_int(stat, SP_OK, 'sp_finalize stat')
   call test_finish('test_errors')
end program test_errors
