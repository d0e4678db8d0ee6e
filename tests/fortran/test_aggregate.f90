!> Aggregate mode from Fortran: sp_setup(..., mode=SP_MODE_AGGREGATE).
!> check_profile.py aggregate checks the aggregate layout, the counts and
!> the call paths (a recursive region is one path).
module aggregate_kernels
   use scope_profiler
   implicit none
   private
   public :: tree

contains

   !> 2**(level+1) - 1 calls of "tree".
   recursive subroutine tree(level)
      integer, intent(in) :: level
      call sp_region_begin('tree')
      if (level > 0) then
         call tree(level - 1)
         call tree(level - 1)
      end if
      call sp_region_end('tree')
   end subroutine tree
end module aggregate_kernels

program test_aggregate
   use scope_profiler
   use sp_test_checks
   use aggregate_kernels
   implicit none
   integer :: i, stat

   call sp_setup('bad_mode.h5', mode=7, stat=stat)
   call check_int(stat, SP_ERR_INVALID_ARGUMENT, 'an unknown mode is refused')
   call sp_setup('aggregate.h5', mode=SP_MODE_AGGREGATE, stat=stat)
   call check_int(stat, SP_OK, 'sp_setup stat')
   call sp_region_begin('driver')
   call tree(4)
   do i = 1, 5
      call sp_region_begin('step')
      call sp_region_begin('inner')
      call sp_region_end('inner')
      call sp_region_end('step')
   end do
   call sp_region_end('driver')
   call sp_finalize(stat)
   call check_int(stat, SP_OK, 'sp_finalize stat')
   call test_finish('test_aggregate')
end program test_aggregate
