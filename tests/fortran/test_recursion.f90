!> Recursive routines: a binary tree of calls by name and a linear chain by
!> handle. check_profile.py recursion checks exact counts and parent ids.
module recursion_kernels
   use scope_profiler
   use, intrinsic :: iso_c_binding, only: c_int
   implicit none
   private
   public :: tree, countdown

contains

   !> 2**(level+1) - 1 calls of "tree", each non-leaf the parent of two.
   recursive subroutine tree(level, leaves)
      integer, intent(in) :: level
      integer, intent(inout) :: leaves
      call sp_region_begin('tree')
      if (level > 0) then
         call tree(level - 1, leaves)
         call tree(level - 1, leaves)
      else
         leaves = leaves + 1
      end if
      call sp_region_end('tree')
   end subroutine tree

   !> n+1 nested calls of the region with handle `region`.
   recursive subroutine countdown(region, n)
      integer(c_int), intent(in) :: region
      integer, intent(in) :: n
      call sp_begin(region)
      if (n > 0) call countdown(region, n - 1)
      call sp_end(region)
   end subroutine countdown
end module recursion_kernels

program test_recursion
   use scope_profiler
   use sp_test_checks
   use recursion_kernels
   implicit none
   integer :: leaves, stat

   call sp_setup('recursion.h5', stat=stat)
   call check_int(stat, SP_OK, 'sp_setup stat')
   leaves = 0
   call sp_region_begin('driver')
   call tree(6, leaves)
   call countdown(sp_region('countdown'), 10)
   call sp_region_end('driver')
   call check_int(leaves, 64, 'leaves of tree(6)')
   call sp_finalize(stat)
   call check_int(stat, SP_OK, 'sp_finalize stat')
   call test_finish('test_recursion')
end program test_recursion
