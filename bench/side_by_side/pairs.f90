! pairs.f90 - the Fortran configurations of the side-by-side benchmark
! (run.py): N begin/end pairs of one region through the installed Fortran
! module, by handle or by name; mode, clock and bound from the environment
! as in pairs.c. Usage: pairs_f KIND N OUTPUT, KIND handle | byname.
! Prints "RESULT loop_ns_per_pair=X loop_cpu_ns_per_pair=C finalize_s=Y
! pairs=N status=S" on stderr (C: cpu_time, the process's CPU time).
program pairs_f
   use, intrinsic :: iso_fortran_env, only: int64, real64, error_unit
   use scope_profiler
   implicit none
   character(len=32) :: kind, arg
   character(len=4096) :: output
   integer(int64) :: n, i, t0, t1, t2, rate
   real(real64) :: c0, c1
   integer :: region, status

   call get_command_argument(1, kind)
   call get_command_argument(2, arg)
   call get_command_argument(3, output)
   read (arg, *) n
   call sp_setup(trim(output), stat=status)
   if (status /= SP_OK) stop 1
   call cpu_time(c0)
   call system_clock(t0, rate)
   if (trim(kind) == 'handle') then
      region = sp_region('solve')
      do i = 1, n
         call sp_begin(region)
         call sp_end(region)
      end do
   else
      do i = 1, n
         call sp_region_begin('solve')
         call sp_region_end('solve')
      end do
   end if
   call system_clock(t1)
   call cpu_time(c1)
   call sp_finalize(stat=status)
   call system_clock(t2)
   write (error_unit, '(a,f0.3,a,f0.3,a,f0.3,a,i0,a,i0)') 'RESULT loop_ns_per_pair=', &
      1.0e9_real64 * real(t1 - t0, real64) / real(rate, real64) / real(n, real64), &
      ' loop_cpu_ns_per_pair=', 1.0e9_real64 * (c1 - c0) / real(n, real64), &
      ' finalize_s=', real(t2 - t1, real64) / real(rate, real64), ' pairs=', n, &
      ' status=', status
end program pairs_f
