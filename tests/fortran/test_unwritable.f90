!> sp_finalize on an output path in a missing directory: a non-zero stat,
!> errmsg set, no file left behind, and the program continues.
!> check_profile.py unwritable checks the directory afterwards.
program test_unwritable
   use scope_profiler
   use sp_test_checks
   implicit none
   integer :: stat
   logical :: exists
   character(len=200) :: errmsg

   call sp_setup('missing_dir/out.h5', stat=stat)
   call check_int(stat, SP_OK, 'sp_setup does not check the directory')
   call sp_region_begin('work')
   call sp_region_end('work')
   errmsg = ''
   call sp_finalize(stat, errmsg)
   call check_int(stat, SP_ERR_OUTPUT, 'sp_finalize stat on a missing directory')
   call check(len_trim(errmsg) > 0, 'sp_finalize sets errmsg')
   call check(index(errmsg, 'sp_finalize: ') == 1, 'errmsg names the procedure: '//trim(errmsg))
   inquire (file='missing_dir/out.h5', exist=exists)
   call check(.not. exists, 'no output file')
   call check(.not. sp_is_active(), 'the session ended anyway')

   ! The same without stat: a line on stderr, and the program goes on.
   call sp_setup('missing_dir/again.h5')
   call sp_region_begin('work')
   call sp_region_end('work')
   call sp_finalize()
   call check(.not. sp_is_active(), 'the second session ended')
   call test_finish('test_unwritable')
end program test_unwritable
