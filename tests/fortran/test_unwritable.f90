!> An output path in a missing directory is refused by sp_setup itself
!> (issue 30: the run must not go on and find out at sp_finalize): a
!> non-zero stat, errmsg set, no session, no file left behind, and the
!> program continues. check_profile.py unwritable checks the directory
!> afterwards.
program test_unwritable
   use scope_profiler
   use sp_test_checks
   implicit none
   integer :: stat
   logical :: exists
   character(len=200) :: errmsg

   errmsg = ''
   call sp_setup('missing_dir/out.h5', stat=stat, errmsg=errmsg)
   call check_int(stat, SP_ERR_OUTPUT, 'sp_setup stat on a missing directory')
   call check(len_trim(errmsg) > 0, 'sp_setup sets errmsg')
   call check(index(errmsg, 'sp_setup: ') == 1, 'errmsg names the procedure: '//trim(errmsg))
   call check(.not. sp_is_active(), 'no session started')
   call sp_region_begin('work')
   call sp_region_end('work')
   call sp_finalize(stat)
   call check_int(stat, SP_ERR_NOT_ACTIVE, 'sp_finalize after the refused setup')
   inquire (file='missing_dir/out.h5', exist=exists)
   call check(.not. exists, 'no output file')

   ! The same without stat: a line on stderr, and the program goes on.
   call sp_setup('missing_dir/again.h5')
   call sp_region_begin('work')
   call sp_region_end('work')
   call sp_finalize()
   call check(.not. sp_is_active(), 'still no session')
   call test_finish('test_unwritable')
end program test_unwritable
