!> fortran_kernel - a small Jacobi solver instrumented with scope_profiler.
!>
!>     fortran_kernel [output.h5] [steps]
!>
!> Without an output path the profile goes to $SCOPE_PROFILER_FILE (else
!> profiling_data.h5). Region tree of one run:
!>
!>     solve > timestep > stencil        (main thread)
!>                      > reduce
!>           > smooth_level > smooth_level > ...   (recursion)
!>     row_block                          (inside the OpenMP loop, per thread)
program fortran_kernel
   use, intrinsic :: iso_fortran_env, only: real64, error_unit
   use scope_profiler
   use jacobi_kernels
   implicit none
   integer, parameter :: n = 256
   real(real64), allocatable :: u(:, :), u_new(:, :), f(:, :)
   real(real64) :: h, change
   character(len=4096) :: path
   character(len=32) :: arg
   character(len=256) :: errmsg
   integer :: step, steps, stat

   path = ''
   if (command_argument_count() >= 1) call get_command_argument(1, path)
   steps = 50
   if (command_argument_count() >= 2) then
      call get_command_argument(2, arg)
      read (arg, *, iostat=stat) steps
      if (stat /= 0 .or. steps < 1) then
         write (error_unit, '(a)') 'usage: fortran_kernel [output.h5] [steps >= 1]'
         stop 2
      end if
   end if

   ! A blank path means "not given": $SCOPE_PROFILER_FILE or the default.
   call sp_setup(path, label='fortran_kernel example', stat=stat, errmsg=errmsg)
   if (stat /= SP_OK) write (error_unit, '(a)') trim(errmsg)//' (running unprofiled)'
   call kernel_regions()

   allocate (u(n, n), u_new(n, n), f(n, n))
   h = 1.0_real64/real(n - 1, real64)
   u = 0
   u_new = 0
   f = 1

   call sp_region_begin('solve')
   change = huge(change)
   do step = 1, steps
      call sp_region_begin('timestep')
      call jacobi_sweep(u, u_new, f, h)
      change = residual_norm(u_new, u)
      u = u_new
      call sp_region_end('timestep')
   end do
   call smooth_levels(u, 5)
   call sp_region_end('solve')
   write (*, '(a,i0,a,es10.3)') 'fortran_kernel: ', steps, ' steps, last change ', change
   ! Arrays of the main program are never freed automatically (they are
   ! implicitly saved); free them so leak checkers see a clean run.
   deallocate (u, u_new, f)

   call sp_finalize(stat, errmsg)
   if (stat /= SP_OK .and. stat /= SP_ERR_NOT_ACTIVE) then
      write (error_unit, '(a)') trim(errmsg)
      stop 1
   end if
end program fortran_kernel
