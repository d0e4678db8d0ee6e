!> Mixed languages, Fortran main: f_outer (Fortran) > c_middle (C, in
!> mixed_c_middle.c) > f_inner (Fortran, called back from C), twice, all in
!> one file. check_profile.py mixed_fortran_main checks the parent chain.
module mixed_fortran_callbacks
   use scope_profiler
   implicit none
   private
   public :: fortran_inner

contains

   !> Called from C: a Fortran region whose parent is a C region.
   subroutine fortran_inner() bind(C, name='fortran_inner')
      call sp_region_begin('f_inner')
      call sp_region_end('f_inner')
   end subroutine fortran_inner
end module mixed_fortran_callbacks

program mixed_fortran_main
   use scope_profiler
   use sp_test_checks
   use mixed_fortran_callbacks, only: fortran_inner
   implicit none
   interface
      subroutine c_middle() bind(C, name='c_middle')
      end subroutine c_middle
   end interface
   integer :: k, stat

   call sp_setup('mixed_fortran_main.h5', stat=stat)
   call check_int(stat, SP_OK, 'sp_setup stat')
   do k = 1, 2
      call sp_region_begin('f_outer')
      call c_middle()
      call sp_region_end('f_outer', stat)
      call check_int(stat, SP_OK, 'f_outer closes after the C region closed')
   end do
   call sp_finalize(stat)
   call check_int(stat, SP_OK, 'sp_finalize stat')
   call test_finish('mixed_fortran_main')
end program mixed_fortran_main
