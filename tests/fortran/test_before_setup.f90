!> Every call before sp_setup and after sp_finalize is a harmless no-op, and
!> says so through stat. check_profile.py before_setup checks that only the
!> calls of the session are in the file and that nothing was printed.
program test_before_setup
   use scope_profiler
   use sp_test_checks
   use, intrinsic :: iso_c_binding, only: c_int
   implicit none
   integer :: stat
   integer(c_int) :: early
   character(len=200) :: errmsg

   call check(.not. sp_is_active(), 'not active before sp_setup')
   call sp_region_begin('early', stat)
   call check_int(stat, SP_OK, 'sp_region_begin before setup')
   call sp_region_end('early', stat)
   call check_int(stat, SP_OK, 'sp_region_end before setup')
   call sp_region_end('never_opened', stat)
   call check_int(stat, SP_OK, 'an unmatched end before setup is a no-op too')
   early = sp_region('early_handle')
   call check(early >= 0, 'sp_region works before setup')
   call sp_begin(early)
   call sp_end(early)
   call sp_region_begin('dangling_early')     ! must not stay open into the session
   call check(sp_now_ns() > 0, 'sp_now_ns before setup')
   errmsg = ''
   call sp_finalize(stat, errmsg)
   call check_int(stat, SP_ERR_NOT_ACTIVE, 'sp_finalize before setup')
   call check(index(errmsg, 'not active') > 0, 'sp_finalize errmsg: '//trim(errmsg))
   call sp_finalize()                         ! silent: documented harmless

   call sp_setup('before_setup.h5', stat=stat)
   call check_int(stat, SP_OK, 'sp_setup stat')
   call sp_region_begin('recorded')
   call sp_region_end('recorded')
   call sp_begin(sp_region('recorded'))
   call sp_end(sp_region('recorded'))
   call sp_finalize(stat)
   call check_int(stat, SP_OK, 'sp_finalize stat')

   call sp_region_begin('late', stat)
   call check_int(stat, SP_OK, 'sp_region_begin after finalize')
   call sp_region_end('late', stat)
   call check_int(stat, SP_OK, 'sp_region_end after finalize')
   call sp_begin(early)
   call sp_end(early)
   call sp_finalize(stat)
   call check_int(stat, SP_ERR_NOT_ACTIVE, 'second sp_finalize')
   call sp_finalize()
   call test_finish('test_before_setup')
end program test_before_setup
