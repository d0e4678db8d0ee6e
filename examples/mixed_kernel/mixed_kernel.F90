!> mixed_kernel - the native half of the README's main job: a Fortran
!> Jacobi solver that calls a C routine every step, on every MPI rank when
!> the library was built with MPI. Fortran and C regions of all ranks land
!> in ONE file with one call tree per rank:
!>
!>     solve > timestep > stencil, reduce          (Fortran)
!>                      > c.halo > c.pack          (C, called from Fortran)
!>                               > c.allreduce     (C, MPI only)
!>           > smooth_level > smooth_level > ...   (Fortran recursion)
!>     row_block                                   (OpenMP threads)
!>
!>     mixed_kernel output.h5 [steps]
program mixed_kernel
   use, intrinsic :: iso_fortran_env, only: real64, error_unit
   use, intrinsic :: iso_c_binding, only: c_double, c_int
   use scope_profiler
   use jacobi_kernels
#ifdef SP_EXAMPLE_MPI
   use mpi
#endif
   implicit none

   interface
      !> halo.c: boundary exchange of the example (records C regions).
      function c_halo_exchange(u, n) bind(C, name='c_halo_exchange') result(boundary)
         import :: c_double, c_int
         real(c_double), intent(inout) :: u(*)
         integer(c_int), value, intent(in) :: n
         real(c_double) :: boundary
      end function c_halo_exchange
   end interface

   integer, parameter :: n = 192
   real(real64), allocatable :: u(:, :), u_new(:, :), f(:, :)
   real(real64) :: h, change, boundary
   character(len=4096) :: path
   character(len=32) :: arg
   character(len=256) :: errmsg
   integer :: step, steps, stat, rank
#ifdef SP_EXAMPLE_MPI
   integer :: ierr
#endif

   path = ''
   if (command_argument_count() >= 1) call get_command_argument(1, path)
   steps = 40
   if (command_argument_count() >= 2) then
      call get_command_argument(2, arg)
      read (arg, *, iostat=stat) steps
      if (stat /= 0 .or. steps < 1) steps = 40
   end if

   rank = 0
#ifdef SP_EXAMPLE_MPI
   call MPI_Init(ierr)
   call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
   call sp_setup_mpi(MPI_COMM_WORLD, path, label='mixed kernel', stat=stat, errmsg=errmsg)
#else
   call sp_setup(path, label='mixed kernel', stat=stat, errmsg=errmsg)
#endif
   if (stat /= SP_OK) write (error_unit, '(a)') trim(errmsg)//' (running unprofiled)'
   call kernel_regions()

   allocate (u(n, n), u_new(n, n), f(n, n))
   h = 1.0_real64/real(n - 1, real64)
   u = 0
   u_new = 0
   f = 1 + rank  ! ranks do different amounts of work: visible imbalance

   call sp_region_begin('solve')
   change = huge(change)
   boundary = 0
   do step = 1, steps
      call sp_region_begin('timestep')
      call jacobi_sweep(u, u_new, f, h)
      change = residual_norm(u_new, u)
      u = u_new
      boundary = c_halo_exchange(u, int(n, c_int))
      call sp_region_end('timestep')
   end do
   call smooth_levels(u, 4)
   call sp_region_end('solve')
   if (rank == 0) write (*, '(a,i0,a,es10.3,a,es10.3)') 'mixed_kernel: ', steps, &
      ' steps, last change ', change, ', boundary ', boundary
   deallocate (u, u_new, f)

   call sp_finalize(stat, errmsg)
   if (stat /= SP_OK .and. stat /= SP_ERR_NOT_ACTIVE) write (error_unit, '(a)') trim(errmsg)
#ifdef SP_EXAMPLE_MPI
   call MPI_Finalize(ierr)
#endif
end program mixed_kernel
