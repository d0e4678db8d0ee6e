!> The Fortran part of mixed_c_main: a Fortran region between two C ones.
module mixed_fortran_middle
   use scope_profiler
   implicit none
   private
   public :: fortran_middle

   interface
      subroutine c_inner() bind(C, name='c_inner')
      end subroutine c_inner
   end interface

contains

   subroutine fortran_middle() bind(C, name='fortran_middle')
      integer :: stat
      call sp_region_begin('f_middle', stat)
      call c_inner()
      call sp_region_end('f_middle', stat)
   end subroutine fortran_middle
end module mixed_fortran_middle
