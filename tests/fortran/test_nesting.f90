!> Nested regions by name, and the by-name and handle paths agreeing on one
!> region. check_profile.py nesting checks the file.
program test_nesting
   use scope_profiler
   use sp_test_checks
   use, intrinsic :: iso_c_binding, only: c_int, c_int64_t
   implicit none
   integer :: step, k, stat
   integer(c_int) :: agree, agree_again, inner
   integer(c_int64_t) :: t0, t1
   character(len=200) :: errmsg

   call check(.not. sp_is_active(), 'not active before sp_setup')
   ! handles may be resolved before sp_setup and stay the same
   agree = sp_region('agree')
   call check(agree >= 0, 'sp_region gives a valid handle before sp_setup')

   errmsg = 'untouched'
   call sp_setup('nesting.h5', label='fortran-nesting', stat=stat, errmsg=errmsg)
   call check_int(stat, SP_OK, 'sp_setup stat')
   call check_text(trim(errmsg), 'untouched', 'errmsg is left alone on success')
   call check(sp_is_active(), 'active after sp_setup')

   t0 = sp_now_ns()
   do step = 1, 3
      call sp_region_begin('timestep')
      call sp_region_begin('stencil')
      call sp_region_end('stencil')
      call sp_region_begin('stencil', stat)
      call check_int(stat, SP_OK, 'sp_region_begin stat')
      call sp_region_end('stencil', stat)
      call check_int(stat, SP_OK, 'sp_region_end stat')
      call sp_region_begin('reduce')
      call sp_region_end('reduce')
      call sp_region_end('timestep')
   end do
   t1 = sp_now_ns()
   call check(t1 > t0, 'sp_now_ns advances')

   ! One region four ways: the same name gives the same handle, and calls
   ! opened one way may be closed the other.
   agree_again = sp_region('agree')
   call check_int(int(agree_again), int(agree), 'sp_region is stable')
   call check_text(sp_region_name(agree), 'agree', 'sp_region_name')
   inner = sp_region('agree_inner')
   do k = 1, 5
      call sp_region_begin('agree')
      call sp_begin(inner)
      call sp_end(inner)
      call sp_region_end('agree')

      call sp_begin(agree)
      call sp_region_begin('agree_inner')
      call sp_region_end('agree_inner')
      call sp_end(agree)

      call sp_region_begin('agree')
      call sp_begin(inner)
      call sp_region_end('agree_inner')
      call sp_end(agree)

      call sp_begin(agree)
      call sp_region_begin('agree_inner')
      call sp_end(inner)
      call sp_region_end('agree   ')   ! trailing blanks: the same region
   end do
   call check_int(int(sp_last_error()), int(SP_OK), 'no error recorded by the handle path')

   call sp_finalize(stat, errmsg)
   call check_int(stat, SP_OK, 'sp_finalize stat')
   call check(.not. sp_is_active(), 'not active after sp_finalize')
   call test_finish('test_nesting')
end program test_nesting
