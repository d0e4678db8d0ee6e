!> overhead_kernels - the Fortran half of the overhead benchmark: loops of
!> begin/end pairs through the scope_profiler module, called from the C
!> main (overhead.c) so both languages are timed by the same clock code.
!> The loops are what an instrumented Fortran code executes: the module's
!> wrappers, not the raw C entry points.
module overhead_kernels
   use, intrinsic :: iso_c_binding, only: c_int, c_int64_t
   use scope_profiler
   implicit none
   private
   public :: fortran_handle_pairs, fortran_name_pairs

contains

   !> `pairs` sp_begin/sp_end pairs of the region handle `region`.
   subroutine fortran_handle_pairs(region, pairs) bind(C, name='fortran_handle_pairs')
      integer(c_int), value, intent(in) :: region
      integer(c_int64_t), value, intent(in) :: pairs
      integer(c_int64_t) :: i
      do i = 1, pairs
         call sp_begin(region)
         call sp_end(region)
      end do
   end subroutine fortran_handle_pairs

   !> `pairs` sp_region_begin/sp_region_end pairs of the region
   !> "bench_by_name" (the same name the C by-name loop records).
   subroutine fortran_name_pairs(pairs) bind(C, name='fortran_name_pairs')
      integer(c_int64_t), value, intent(in) :: pairs
      integer(c_int64_t) :: i
      do i = 1, pairs
         call sp_region_begin('bench_by_name')
         call sp_region_end('bench_by_name')
      end do
   end subroutine fortran_name_pairs

end module overhead_kernels
